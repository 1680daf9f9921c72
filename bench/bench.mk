# Builds the bench's C tools (bench/tools/); the main Makefile includes it.
#
# The benchmark tools of `make bench` (bench/tools/), included by the main
# Makefile:
#   $(BUILD)/bench/slurm-baseline  placeholders straight through libslurm
#   $(BUILD)/bench/bindwatch       bind times of a namespace's pods (libk8s)
#   $(BUILD)/bench/podgen          pods created at a fixed rate (libk8s)
#   $(BUILD)/bench/readywait       when a scheduler's /readyz says 200 (curl)
#   $(BUILD)/bench/record          the JSON records and results file (jansson)
#   $(BUILD)/bench/cpuseries       the CPU over time of the machine and processes
# `make bench-tools` builds them all.  `make bench-selftest` checks the
# driver's scenario runner and the constrained scenario's pieces
# (bench/selftest.sh) without a stack.

# Included before the main Makefile's first target, don't become the default.
ifeq ($(.DEFAULT_GOAL),)
.DEFAULT_GOAL := all
endif

BENCH_SRCS	:= bench/tools/slurm_baseline.c bench/tools/bindwatch.c \
		   bench/tools/podgen.c bench/tools/readywait.c bench/tools/pct.c \
		   bench/tools/bench.c bench/tools/kube.c bench/tools/record.c \
		   bench/tools/cpuseries.c
BENCH_OBJS	:= $(BENCH_SRCS:%.c=$(BUILD)/%.o)
BENCH_TOOLS	:= $(BUILD)/bench/slurm-baseline $(BUILD)/bench/bindwatch \
		   $(BUILD)/bench/podgen $(BUILD)/bench/readywait \
		   $(BUILD)/bench/record $(BUILD)/bench/cpuseries
# What the tools share: bench.o (no library) in all, kube.o in the libk8s
# ones.
BENCH_COMMON	:= $(BUILD)/bench/tools/bench.o $(BUILD)/bench/tools/pct.o
BENCH_KUBE	:= $(BENCH_COMMON) $(BUILD)/bench/tools/kube.o

bench-tools: $(BENCH_TOOLS)

# A failed scenario recorded and the run going on, no cluster needed.
bench-selftest: $(BUILD)/bench/record
	$(Q)bench/selftest.sh

$(BUILD)/bench/tools/%.o: bench/tools/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

# libslurm only: no Kubernetes on this path.
$(BUILD)/bench/slurm-baseline: $(BUILD)/bench/tools/slurm_baseline.o \
    $(BENCH_COMMON)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lslurm

$(BUILD)/bench/bindwatch: $(BUILD)/bench/tools/bindwatch.o $(BENCH_KUBE) \
    $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bench/podgen: $(BUILD)/bench/tools/podgen.o $(BENCH_KUBE) $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# libcurl only.
$(BUILD)/bench/readywait: $(BUILD)/bench/tools/readywait.o \
    $(BUILD)/bench/tools/bench.o
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# No library: /proc alone.
$(BUILD)/bench/cpuseries: $(BUILD)/bench/tools/cpuseries.o \
    $(BUILD)/bench/tools/bench.o
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^

# jansson only: the records are written from what the others measured.
$(BUILD)/bench/record: $(BUILD)/bench/tools/record.o \
    $(BUILD)/bench/tools/pct.o
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

.PHONY: bench-tools bench-selftest

-include $(BENCH_OBJS:.o=.d)
