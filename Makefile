# slurm-bridge: one non-recursive Makefile for the library, both daemons,
# the tests and the local stack.  `make V=1` shows full commands.

CC		?= cc
PKGS		:= libcurl libssl jansson libmicrohttpd gnutls yaml-0.1
WARN		:= -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes \
		   -Wmissing-declarations -Wshadow -Wpointer-arith -Wcast-qual \
		   -Wwrite-strings -Wformat=2
OPT		?= -O2 -g
# pkg-config runs on first use, not when make reads this file: `make deps`
# on a machine without pkg-config (or the libraries) must not warn.
# (VAR = $(eval VAR := ...)$(VAR) computes VAR once, when it is first used.)
PKG_CFLAGS	= $(eval PKG_CFLAGS := $$(shell pkg-config --cflags $$(PKGS)))$(PKG_CFLAGS)
PKG_LIBS	= $(eval PKG_LIBS := $$(shell pkg-config --libs $$(PKGS)))$(PKG_LIBS)
CFLAGS		+= -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -pthread -MMD -MP \
		   -Iinclude $(PKG_CFLAGS)
LDLIBS		+= $(PKG_LIBS) $(SLURM_LIBS) -pthread
CHECK_CFLAGS	= $(eval CHECK_CFLAGS := $$(shell pkg-config --cflags check 2>/dev/null))$(CHECK_CFLAGS)
CHECK_LIBS	= $(eval CHECK_LIBS := $$(shell pkg-config --libs check 2>/dev/null))$(CHECK_LIBS)

# libslurm: the daemons must be built against the libslurm of the site's
# slurmctld (a client talks only to controllers within about two releases
# of its own).  Found, in order: SLURM_PREFIX (a site's own install, e.g.
# /opt/slurm), the slurm.pc that Slurm installs, the system's.  Its headers
# come in with -isystem: slurm.h does not build warning-free under our
# warnings.
ifneq ($(SLURM_PREFIX),)
SLURM_CFLAGS	:= -isystem $(SLURM_PREFIX)/include
SLURM_LIBS	:= -L$(SLURM_PREFIX)/lib -Wl,-rpath,$(SLURM_PREFIX)/lib -lslurm
else
SLURM_CFLAGS	= $(eval SLURM_CFLAGS := $$(shell pkg-config --cflags slurm 2>/dev/null | sed 's/-I/-isystem /g'))$(SLURM_CFLAGS)
SLURM_LIBS	= $(eval SLURM_LIBS := $$(or $$(shell pkg-config --libs slurm 2>/dev/null),-lslurm))$(SLURM_LIBS)
endif
CFLAGS		+= $(SLURM_CFLAGS)

BUILD		?= build
BINDIR		?= .
# Instrumented builds (asan) keep their own library under their BUILD dir.
LIBK8S_A	?= libk8s.a
STACK_DIR	?= /var/lib/slurm-bridge-stack
export STACK_DIR

# SLURM=24.11 or SLURM=26.05: `make all` and `make check` run inside the
# Debian root of that Slurm release (scripts/stack/slurm/root.sh), against its
# libslurm, and leave everything in build-slurm-<release>/.  22.05 is the
# host's own (Debian 12), built in place.  The stack's scripts pick the
# binaries of the release the stack runs.
# Unset, it is the release the local stack runs (cluster-up records it).
SLURM		?= $(or $(shell cat $(STACK_DIR)/slurm-release 2>/dev/null),22.05)
export SLURM
ifneq ($(SLURM),22.05)
ifeq ($(SLURM_IN_ROOT),)
SLURM_DELEGATE	:= 1
else
BUILD		:= build-slurm-$(SLURM)
BINDIR		:= build-slurm-$(SLURM)
LIBK8S_A	:= build-slurm-$(SLURM)/libk8s.a
endif
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

LIBK8S_SRCS	:= libk8s/log.c libk8s/xmalloc.c libk8s/buf.c libk8s/clock.c \
		   libk8s/kubeconfig.c libk8s/yamldoc.c \
		   libk8s/client.c libk8s/request.c libk8s/object.c \
		   libk8s/match.c libk8s/encode.c \
		   libk8s/quantity.c libk8s/watch.c libk8s/informer.c \
		   libk8s/recorder.c libk8s/lease.c libk8s/limiter.c \
		   libk8s/map.c libk8s/strv.c libk8s/list.c \
		   libk8s/discovery.c
# common/: what both daemons link.  The pure policy (translate, bounds, workload), the
# config file, the metrics writer and the HTTP(S) server (httpd.c with its
# TLS, httpdtls.c, and connection limits, httpdconn.c: the only
# libmicrohttpd users).
SHARED_SRCS	:= common/translate.c common/topology.c common/fit.c common/dra.c common/bounds.c common/workload.c common/config.c \
		   common/ownerrec.c common/daemon.c \
		   common/metrics.c common/httpd.c common/httpdtls.c common/httpdconn.c
BRIDGE_LIB_SRCS	:= $(SHARED_SRCS) bridge/queue.c bridge/stats.c bridge/intern.c \
		   bridge/podrec.c bridge/noderec.c bridge/placement.c \
		   bridge/groupjob.c bridge/worker.c
BRIDGE_SRCS	:= bridge/main.c bridge/reconcile.c bridge/now.c bridge/group.c \
		   bridge/groups.c bridge/form.c bridge/bind.c bridge/end.c \
		   bridge/pods.c bridge/extender.c \
		   bridge/lookups.c bridge/poll.c bridge/nodes.c bridge/sweep.c \
		   bridge/writepool.c bridge/submitter.c bridge/poller.c \
		   bridge/ender.c bridge/writes.c bridge/slurm.c bridge/slurmsubmit.c \
		   bridge/slurmload.c bridge/slurmend.c bridge/runas.c bridge/leader.c bridge/endpoints.c \
		   bridge/eventer.c bridge/memstats.c bridge/claims.c \
		   bridge/exclude.c \
		   $(BRIDGE_LIB_SRCS)
ADMISSION_LIB_SRCS := admission/review.c admission/mutate.c \
		   admission/validate.c admission/owners.c admission/certs.c \
		   admission/guard.c
ADMISSION_SRCS	:= admission/main.c admission/server.c admission/cabundle.c \
		   admission/uninstall.c \
		   $(ADMISSION_LIB_SRCS) $(SHARED_SRCS)
# The node epilog a site adds to Slurm (epilog/main.c, cgroup.c,
# slurmnode.c): libc only, with log.c and clock.c of libk8s; its API
# fallback (epilog/api.c, slurm-bridge-epilog-api) links libk8s.
EPILOG_SRCS	:= epilog/main.c epilog/cgroup.c epilog/slurmnode.c
EPILOG_API_SRCS	:= epilog/api.c epilog/slurmnode.c
TEST_SRCS	:= test/check_main.c test/check_quantity.c test/check_watch.c \
		   test/check_kubeconfig.c test/check_translate.c \
		   test/check_queue.c test/check_map.c test/check_placement.c \
		   test/check_workload.c test/check_ownerrec.c \
		   test/check_review.c test/check_config.c test/check_dra.c \
		   test/check_podrec.c test/check_noderec.c test/check_util.c test/check_certs.c \
		   test/check_guard.c test/check_ender.c test/check_fit.c \
		   test/check_epilog.c test/check_log.c
# The group state machine: reconcile.c, the group files and writes.c over fakes of
# Slurm (the seam of the slurm*.c files), the writepool, libk8s's requests and
# the clock, with the submit, poll and end threads' own code on workers of no
# thread (test/drive.c); a binary of its own, since the fakes stand in for
# parts of the daemon.
GROUP_TEST_SRCS	:= test/check_group.c test/fake_slurm.c test/fake_writes.c \
		   test/drive.c test/fake_clock.c
GROUP_BRIDGE_SRCS := bridge/reconcile.c bridge/group.c bridge/groups.c \
		   bridge/form.c bridge/bind.c bridge/end.c \
		   bridge/pods.c bridge/extender.c bridge/writes.c \
		   bridge/lookups.c bridge/poll.c bridge/nodes.c bridge/sweep.c \
		   bridge/leader.c bridge/claims.c bridge/exclude.c \
		   bridge/submitter.c bridge/poller.c bridge/ender.c \
		   $(BRIDGE_LIB_SRCS)

LIBK8S_OBJS	:= $(LIBK8S_SRCS:%.c=$(BUILD)/%.o)
BRIDGE_OBJS	:= $(BRIDGE_SRCS:%.c=$(BUILD)/%.o)
ADMISSION_OBJS	:= $(ADMISSION_SRCS:%.c=$(BUILD)/%.o)
EPILOG_OBJS	:= $(EPILOG_SRCS:%.c=$(BUILD)/%.o)
EPILOG_API_OBJS	:= $(EPILOG_API_SRCS:%.c=$(BUILD)/%.o)
TEST_OBJS	:= $(TEST_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/bridge/ender.o \
		   $(BUILD)/epilog/cgroup.o \
		   $(BUILD)/bridge/poller.o \
		   $(sort $(BRIDGE_LIB_SRCS:%.c=$(BUILD)/%.o) \
		   $(ADMISSION_LIB_SRCS:%.c=$(BUILD)/%.o))
GROUP_OBJS	:= $(GROUP_TEST_SRCS:%.c=$(BUILD)/%.o) \
		   $(sort $(GROUP_BRIDGE_SRCS:%.c=$(BUILD)/%.o))
DEPS		:= $(BUILD)/test/integration/check_k8s_it.d $(LIBK8S_OBJS:.o=.d) $(BRIDGE_OBJS:.o=.d) \
		   $(ADMISSION_OBJS:.o=.d) $(EPILOG_OBJS:.o=.d) $(EPILOG_API_OBJS:.o=.d) \
		   $(TEST_SRCS:%.c=$(BUILD)/%.d) \
		   $(GROUP_TEST_SRCS:%.c=$(BUILD)/%.d)

ifeq ($(SLURM_DELEGATE),1)
all check:
	$(Q)scripts/stack/slurm/in-root.sh $(SLURM) $(MAKE) --no-print-directory $@
else
all: $(LIBK8S_A) $(BINDIR)/slurm-bridge $(BINDIR)/slurm-bridge-admission \
    $(BINDIR)/slurm-bridge-epilog $(BINDIR)/slurm-bridge-epilog-api

# Unit tests (Check).  CK_RUN_SUITE=name runs one suite.  Then the node
# epilog as slurmd runs it, over a cgroup tree of its own (test/epilog/run.sh).
# check_group's stderr (the bridge's own log lines) goes to
# $(BUILD)/check_group.log, shown when a test or a sanitizer fails.
check: $(BUILD)/check_unit $(BUILD)/check_group $(BINDIR)/slurm-bridge-epilog
	$(Q)$(BUILD)/check_unit
	$(Q)test/epilog/run.sh $(BINDIR)/slurm-bridge-epilog >$(BUILD)/check_epilog.log || \
		{ cat $(BUILD)/check_epilog.log; exit 1; }
	$(Q)$(BUILD)/check_group 2>$(BUILD)/check_group.log || \
		{ cat $(BUILD)/check_group.log; exit 1; }
	$(Q)if grep -qE 'runtime error|Sanitizer' $(BUILD)/check_group.log; \
		then cat $(BUILD)/check_group.log; exit 1; fi
endif

$(LIBK8S_A): $(LIBK8S_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BINDIR)/slurm-bridge: $(BRIDGE_OBJS) $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(BRIDGE_OBJS) $(LIBK8S_A) $(LDLIBS)

$(BINDIR)/slurm-bridge-admission: $(ADMISSION_OBJS) $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(ADMISSION_OBJS) $(LIBK8S_A) $(LDLIBS)

# Only libc, linked statically (not under a sanitizer): slurmd runs it at
# every job end on every node, and a static program starts without the
# dynamic loader's work.  The objects it takes from libk8s.a (log, clock)
# need nothing else.
$(BINDIR)/slurm-bridge-epilog: $(EPILOG_OBJS) $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(if $(findstring sanitize,$(LDFLAGS)),,-static) \
		-o $@ $(EPILOG_OBJS) $(LIBK8S_A)

$(BINDIR)/slurm-bridge-epilog-api: $(EPILOG_API_OBJS) $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(EPILOG_API_OBJS) $(LIBK8S_A) \
		$(PKG_LIBS) -pthread

$(BUILD)/test/%.o: test/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(CHECK_CFLAGS) -Icommon -Ibridge -Iadmission -Iepilog -c -o $@ $<

# Include paths follow the layering: libk8s sees only include/; common/ adds
# its own headers; each daemon sees common/ and its own directory; the tests
# see everything.
$(BUILD)/common/%.o $(BUILD)/bridge/%.o $(BUILD)/admission/%.o \
    $(BUILD)/epilog/%.o: CFLAGS += -Icommon

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/check_unit: $(TEST_OBJS) $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(TEST_OBJS) $(LIBK8S_A) \
		$(CHECK_LIBS) $(LDLIBS)

$(BUILD)/check_group: $(GROUP_OBJS) $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(GROUP_OBJS) $(LIBK8S_A) \
		$(CHECK_LIBS) $(LDLIBS)

$(BUILD)/check_integration: $(BUILD)/test/integration/check_k8s_it.o $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBK8S_A) $(CHECK_LIBS) $(LDLIBS)

# The placement rule (common/fit.c) over a cluster read from a file
# (test/tools/fitcheck.c): the feasible nodes of each pod, for make
# contract-diff to hold against kube-scheduler's.
$(BUILD)/fitcheck: $(BUILD)/test/tools/fitcheck.o \
    $(SHARED_SRCS:%.c=$(BUILD)/%.o) $(LIBK8S_A)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
-include $(BUILD)/test/tools/fitcheck.d

# The unit tests under valgrind, then e2e scenarios with both daemons under
# valgrind (scripts/dev/sanitize.sh: t_10 t_40 t_80 t_97 by default).
check-valgrind: $(BUILD)/check_unit $(BUILD)/check_group
	$(Q)CK_FORK=no valgrind --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite --track-origins=yes \
		$(BUILD)/check_unit
	$(Q)CK_FORK=no valgrind --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite --track-origins=yes \
		$(BUILD)/check_group
	$(Q)scripts/dev/sanitize.sh valgrind $(E2E_FILTER)

# The unit tests with ASan + UBSan, then every e2e scenario with both
# daemons built that way; any sanitizer report fails.
asan:
	$(Q)$(MAKE) BUILD=build-asan LIBK8S_A=build-asan/libk8s.a \
		OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined" check
	$(Q)scripts/dev/sanitize.sh asan $(E2E_FILTER)

# libFuzzer targets (clang).  FUZZ_TIME seconds each, seeded from the test
# cases (FUZZ_SEEDS_<target>) and from test/fuzz/corpus/<target>/, which
# holds only the seeds found nowhere else; what the fuzzers learn goes to
# build-fuzz/corpus/ (the one corpus directory they are given), and a crash
# leaves its input in build-fuzz/ to turn into a regression case.
FUZZ_TIME	?= 60
FUZZ_TARGETS	:= watch list quantity review translate config assign
FUZZ_SEEDS_watch	= $(wildcard test/data/watch/*.json)
FUZZ_SEEDS_review	= $(wildcard test/data/review/*/input.json test/data/bad/*.json)
FUZZ_SEEDS_translate	= $(wildcard test/data/translate/*/input.json)
FUZZ_SEEDS_config	= test/data/review/config.yaml
FUZZ_COMMA	:= ,
FUZZ_SPACE	:= $(subst ,, )
FUZZ_CFLAGS	= -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude $(PKG_CFLAGS) \
		   -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_LIB	:= libk8s/xmalloc.c libk8s/buf.c libk8s/clock.c libk8s/log.c libk8s/client.c libk8s/limiter.c \
		   libk8s/quantity.c libk8s/watch.c libk8s/list.c libk8s/object.c \
		   libk8s/match.c libk8s/encode.c

build-fuzz/fuzz_%: test/fuzz/fuzz_%.c $(FUZZ_LIB) include/k8s.h
	@mkdir -p build-fuzz
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIB) \
		$(PKG_LIBS) -pthread

# The webhook's whole request path: its library, the shared policy, libk8s.
build-fuzz/fuzz_review: test/fuzz/fuzz_review.c $(ADMISSION_LIB_SRCS) \
    $(SHARED_SRCS) $(LIBK8S_SRCS)
	@mkdir -p build-fuzz
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_CFLAGS) -Icommon -Iadmission -o $@ $< $(ADMISSION_LIB_SRCS) \
		$(SHARED_SRCS) $(LIBK8S_SRCS) $(PKG_LIBS) \
		-pthread

# The shared policy (translate, workload), placement, the pod record and the
# config file over libk8s's pure parts.
FUZZ_POLICY	:= translate config assign
FUZZ_POLICY_SRCS := common/translate.c common/topology.c common/fit.c common/dra.c common/bounds.c common/workload.c common/config.c \
		   bridge/placement.c \
		   bridge/podrec.c bridge/intern.c libk8s/map.c libk8s/strv.c \
		   libk8s/yamldoc.c

$(FUZZ_POLICY:%=build-fuzz/fuzz_%): build-fuzz/fuzz_%: test/fuzz/fuzz_%.c \
    $(FUZZ_POLICY_SRCS) $(FUZZ_LIB) common/policy.h common/config.h \
    include/k8s.h include/xmalloc.h include/yamldoc.h
	@mkdir -p build-fuzz
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_CFLAGS) -Icommon -Ibridge -o $@ $< $(FUZZ_POLICY_SRCS) \
		$(FUZZ_LIB) $(PKG_LIBS) -pthread

fuzz: $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
	$(shell mkdir -p build-fuzz)$(foreach t,$(FUZZ_TARGETS),$(file >build-fuzz/seeds-$(t),$(subst \
		$(FUZZ_SPACE),$(FUZZ_COMMA),$(strip $(FUZZ_SEEDS_$(t)) $(wildcard test/fuzz/corpus/$(t)/*)))))
	$(Q)for t in $(FUZZ_TARGETS); do \
		echo "fuzz: $$t for $(FUZZ_TIME)s"; \
		mkdir -p build-fuzz/corpus/$$t; \
		build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_TIME) \
			-artifact_prefix=build-fuzz/$$t- -print_final_stats=1 \
			-seed_inputs=@build-fuzz/seeds-$$t \
			build-fuzz/corpus/$$t 2>&1 | grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|==.*ERROR|SUMMARY)' \
			|| true; \
		ls build-fuzz/$$t-* >/dev/null 2>&1 && { echo "fuzz: $$t crashed"; exit 1; }; \
	done; echo "fuzz: no crashes"

# Debian packages for the build, the tests and the stack.
deps:
	$(Q)scripts/dev/deps.sh

cluster-up:
	$(Q)scripts/stack/cluster-up.sh

cluster-down:
	$(Q)scripts/stack/cluster-down.sh

# One real node (kubelet, containerd, runc) beside the kwok nodes, for the
# in-cluster daemons: labelled and tainted as a system node
# (scripts/stack/k8s/node-up.sh).  The images are imported into its containerd.
node-up: deps images
	$(Q)scripts/dev/deps.sh --node
	$(Q)scripts/stack/cluster-up.sh
	$(Q)scripts/stack/k8s/node-up.sh

# Both daemons installed by the Helm chart as pods on that node: install,
# smoke scenarios, leader killed, upgrade, uninstall (test/incluster/run.sh).
# The node goes again afterwards (its kube-scheduler would bind pods the
# e2e suite expects no scheduler to take), unless KEEP_NODE=1.
in-cluster-test: node-up
	$(Q)rc=0; test/incluster/run.sh || rc=$$?; \
		[ -n "$(KEEP_NODE)" ] || scripts/stack/k8s/node-up.sh --down; exit $$rc

node-down:
	$(Q)scripts/stack/k8s/node-up.sh --down

# Dynamic Resource Allocation on the real node: containerd 2.x with CDI and
# the DRA example driver's kubelet plugin (NODE_DRA=1 node-up; both built
# from Go modules by scripts/stack/k8s/dra-build.sh), behind a Slurm node; a pod
# with a claim, placed by Slurm and started by the kubelet, sees the GPUs
# Slurm allocated (test/incluster/dra-node.sh).  The node goes again after.
dra-node-test: all deps images
	$(Q)scripts/dev/deps.sh --node
	$(Q)scripts/stack/cluster-up.sh
	$(Q)scripts/stack/k8s/node-up.sh --down >/dev/null
	$(Q)NODE_DRA=1 scripts/stack/k8s/node-up.sh
	$(Q)rc=0; test/incluster/dra-node.sh || rc=$$?; \
		scripts/stack/k8s/node-up.sh --down; exit $$rc

# The handoff on the real node (test/incluster/handoff-node.sh): a pod
# whose container ignores SIGTERM, behind the last Slurm node, ended by a
# force delete, scancel, its time limit, a rewritten comment, a preemption
# with GraceTime, the kubelet down and the API server down; the native job
# waiting for the node starts only once the pod's cgroup is empty, and no
# node is left drained.  The node goes again
# after.
handoff-node-test: all deps images
	$(Q)scripts/dev/deps.sh --node
	$(Q)scripts/stack/cluster-up.sh
	$(Q)scripts/stack/k8s/node-up.sh
	$(Q)rc=0; test/incluster/handoff-node.sh || rc=$$?; \
		scripts/stack/k8s/node-up.sh --down; exit $$rc

bridge-up: all
	$(Q)scripts/stack/bridge-up.sh

# The JobSet, LeaderWorkerSet, Kueue and KubeRay controllers (from their Go
# modules, cached by version; Kueue and KubeRay are left out, saying why,
# when their module cannot be had).
workload-controllers:
	$(Q)scripts/stack/workloads-up.sh

# libk8s against the real API server of the local stack.
integration: $(BUILD)/check_integration
	$(Q)scripts/stack/cluster-up.sh
	$(Q)KUBECONFIG=$(STACK_DIR)/kubeconfig STACK_SCRIPTS=$(CURDIR)/scripts/stack \
		$(BUILD)/check_integration

# End-to-end scenarios on the real stack (brought up if needed).
# Benchmarks report figures and never assert speed; the JSON goes under
# bench/results/ for history, written by bench/tools/record.  make bench:
# every scenario of bench/scenarios/ (singles, gangs, fixed, churn,
# backlog, webhook, owners), run by bench/run.sh on a BENCH_NODES (64)
# stack.  make bench-owners: the daemons' memory against large owner
# objects alone, on the stack as it is (bench/run.sh owners).  make
# bench-1000: singles, gangs and the backlog (50000 pending, and its
# release) on 1000 nodes, one round (about 9 GiB of RAM; the band of
# 50000 gets 1500 s, as the stack creates some 60 pods/s at that size;
# the BENCH_* settings below can be overridden from the environment).
bench: all bench-tools
	$(Q)bench/run.sh

bench-1000: all bench-tools
	$(Q)BENCH_NODES=$${BENCH_NODES:-1000} \
		BENCH_SCENARIOS="$${BENCH_SCENARIOS:-singles gangs backlog}" \
		BENCH_ROUNDS=$${BENCH_ROUNDS:-1} BENCH_SINGLES=$${BENCH_SINGLES:-8000} \
		BENCH_GANGS=$${BENCH_GANGS:-125} \
		BENCH_BACKLOG_TIMEOUT_S=$${BENCH_BACKLOG_TIMEOUT_S:-1500} bench/run.sh
.PHONY: bench-1000

bench-owners: all $(BUILD)/bench/record
	$(Q)bench/run.sh owners
.PHONY: bench-owners

# The daemons' container images, from scratch with buildah: each holds its
# programs, their shared libraries (and libslurm's plugins), CA
# certificates and nothing else (scripts/deploy/images.sh).
images: all
	$(Q)scripts/dev/deps.sh --images
	$(Q)scripts/deploy/images.sh

# The webhook alone: p50/p99 and throughput over TLS with wrk.
bench-webhook: all bench-tools
	$(Q)scripts/stack/cluster-up.sh
	$(Q)scripts/stack/bridge-up.sh
	$(Q)bench/webhook/run.sh

e2e: all
	$(Q)scripts/stack/cluster-up.sh
	$(Q)scripts/stack/workloads-up.sh
	$(Q)scripts/stack/bridge-up.sh
	$(Q)test/e2e/run.sh

# Faults on the real stack (scheduler kill -9, slurmctld and API server
# restarts, a dead slurmd, the webhook down, leader failover) with the
# invariants of test/fault/invariants.py after each.
fault: all
	$(Q)scripts/stack/cluster-up.sh
	$(Q)scripts/stack/workloads-up.sh
	$(Q)scripts/stack/bridge-up.sh
	$(Q)test/fault/run.sh

# The bad-input corpus (test/data/bad/): to a private webhook instance, 20
# passes with memory watched, and through the API straight to the scheduler.
bad-input: all
	$(Q)scripts/stack/cluster-up.sh
	$(Q)scripts/stack/bridge-up.sh
	$(Q)test/bad/run.sh --api

# The placement rule (common/fit.c) against a stock kube-scheduler as the
# oracle: random pods over random kwok nodes, kube-scheduler's feasible
# nodes (from its filter extender) against build/fitcheck's, pod by pod,
# on the running stack (test/contract/diff.sh; SEED, COUNT and DIFF_API
# from the environment, DIFF_API=private for a control plane of its own).
contract-diff: $(BUILD)/fitcheck
	$(Q)FITCHECK=$(BUILD)/fitcheck test/contract/diff.sh
.PHONY: contract-diff

# Everything CI runs: first the Go check (scripts/dev/go-check.sh: one line
# and a stop when the Go on PATH cannot build the stack), then install,
# build, unit tests, a short fuzz pass, integration and end-to-end tests
# and the fault suite on the real stack.
test:
	$(Q)scripts/dev/go-check.sh "make test"
	$(Q)$(MAKE) deps
	$(Q)$(MAKE) all
	$(Q)$(MAKE) check
	$(Q)$(MAKE) -j2 lint
	$(Q)$(MAKE) fuzz FUZZ_TIME=10
	$(Q)$(MAKE) integration
	$(Q)$(MAKE) e2e
	$(Q)$(MAKE) bad-input
	$(Q)$(MAKE) fault
	$(Q)$(MAKE) contract-diff
	$(Q)$(MAKE) demo-check

# The demo installs, builds and brings the stack, both daemons and the LWS
# controller up itself (quietly: their output goes to
# $(STACK_DIR)/log/demo.log), and prints how long each part took.
demo:
	$(Q)scripts/dev/go-check.sh "make demo"
	$(Q)scripts/demo/demo.sh

# make demo on the running stack, its output read as a user reads it (a
# <none> job id, an empty table or a sentence the table contradicts
# fails), then its namespace removed.
demo-check: all
	$(Q)test/demo/check.sh

# The daemons built and unit-tested against every Slurm release the stack
# knows (scripts/stack/stack-env.sh: SLURM_RELEASES), each in its own root but
# the host's.
SLURM_RELEASES_ALL = $(shell sed -n 's/^SLURM_RELEASES="\(.*\)"/\1/p' scripts/stack/stack-env.sh | sed 's/=[a-z]*//g')
check-releases:
	$(Q)for r in $(SLURM_RELEASES_ALL); do \
		echo "check-releases: Slurm $$r"; \
		$(MAKE) --no-print-directory SLURM=$$r all check || exit 1; \
	done

# The install path from nothing: make deps, make all and make check in a
# clean Debian 12 root made by debootstrap (scripts/dev/fresh-check.sh).
fresh-check: deps
	$(Q)scripts/dev/fresh-check.sh

# Static analysis: clang-tidy (.clang-tidy) and cppcheck (suppressions in
# .cppcheck-suppressions, a reason above each) over every C file we build:
# the library, both daemons, the tests, the fuzzers and the bench tools.
# Either one failing fails lint, as do manifests-check (under a second
# once Helm is built), lint-man (the man pages) and lint-docs.  clang-tidy
# reads each file's flags from compile_commands.json, which this Makefile
# writes from its own rules (so does any editor's clangd); a file's
# clang-tidy result is kept under $(BUILD)/lint/ until it, a header or the
# config changes, and -j runs files in parallel.
LINT_CFLAGS	= -std=c11 -D_GNU_SOURCE $(WARN) -pthread -Iinclude \
		   $(PKG_CFLAGS) $(SLURM_CFLAGS)
LINT_LIB	= $(LIBK8S_SRCS)
LINT_DAEMONS	= $(sort $(BRIDGE_SRCS) $(ADMISSION_SRCS) $(EPILOG_SRCS) $(EPILOG_API_SRCS))
LINT_TESTS	= $(TEST_SRCS) $(GROUP_TEST_SRCS) test/integration/check_k8s_it.c \
		   $(wildcard test/fuzz/fuzz_*.c)
LINT_BENCH	= $(BENCH_SRCS)
LINT_SRCS	= $(LINT_LIB) $(LINT_DAEMONS) $(LINT_TESTS) $(LINT_BENCH)
LINT_HDRS	= $(wildcard include/*.h libk8s/*.h common/*.h bridge/*.h \
		   admission/*.h epilog/*.h test/*.h bench/tools/*.h)
# One compile_commands.json entry: $(1) the file, $(2) its flags.
lint_entry	= {"directory": "$(CURDIR)", "file": "$(1)", \
		   "command": "$(CC) $(strip $(LINT_CFLAGS) $(2)) -c $(1)"}
comma		:= ,

compile_commands.json: Makefile bench/bench.mk
	@echo "  GEN     $@"
	$(file >$@.tmp,[)
	$(foreach f,$(LINT_LIB),$(file >>$@.tmp,$(call lint_entry,$(f)),))
	$(foreach f,$(LINT_DAEMONS),$(file >>$@.tmp,$(call lint_entry,$(f),-Icommon),))
	$(foreach f,$(LINT_TESTS),$(file >>$@.tmp,$(call lint_entry,$(f),$(CHECK_CFLAGS) -Icommon -Ibridge -Iadmission -Iepilog),))
	$(foreach f,$(LINT_BENCH),$(file >>$@.tmp,$(call lint_entry,$(f)),))
	$(Q)sed '$$ s/,$$//' $@.tmp >$@ && echo ']' >>$@ && rm -f $@.tmp

$(BUILD)/lint/%.tidy: % .clang-tidy compile_commands.json $(LINT_HDRS)
	@mkdir -p $(dir $@)
	@echo "  TIDY    $<"
	$(Q)scripts/dev/tidy.sh $<
	@touch $@

lint-tidy: $(LINT_SRCS:%=$(BUILD)/lint/%.tidy)

# cppcheck reads our headers but not the system's (slow, and not its
# business), except the three whose macros our code is written in: TAILQ_*,
# json_*_foreach and Check's START_TEST.  Their paths come from the compiler.
lint_syshdr	= $(shell $(CC) $(PKG_CFLAGS) $(CHECK_CFLAGS) -include $(1) -E \
		   -xc /dev/null 2>/dev/null | \
		   sed -n 's|^. [0-9]* "\(/[^"]*/$(1)\)".*|\1|p' | head -n 1)
LINT_SYSHDRS	= $(foreach h,sys/queue.h jansson.h check.h,--include=$(call lint_syshdr,$(h)))

lint-cppcheck:
	@echo "  CPPCHECK"
	$(Q)cppcheck --quiet --std=c11 -D_GNU_SOURCE -D__GNUC__ \
		--enable=warning,style,performance,portability \
		--library=posix --library=gnu $(LINT_SYSHDRS) \
		--error-exitcode=1 --inline-suppr \
		--suppressions-list=.cppcheck-suppressions \
		-Iinclude -Icommon -Ibridge -Iadmission -Ilibk8s \
		$(LINT_SRCS)

lint: lint-tidy lint-cppcheck lint-imports lint-fmt lint-man manifests-check lint-docs \
	lint-index

# The docs stand alone and say what is true (scripts/dev/lint-docs.py and
# scripts/dev/lint-names.py, whose headers give the rules): every relative
# link in README.md, docs/ and manifests/README.md resolves, anchors
# included, and nothing links outside the repository; every flag, config
# key, annotation or label key, make target and metric a page or man page
# names exists in the code, and no page ends mid-sentence.
lint-docs:
	@echo "  DOCS"
	$(Q)scripts/dev/lint-docs.py
	$(Q)scripts/dev/lint-names.py

# The indexes stay true (scripts/dev/lint-index.py, whose header gives the
# rules): the thread map in bridge/queue.h against the threads the code
# starts and the locks it declares (and its copy in the contributors'
# docs against the header), which thread runs which code (from each
# thread's entry points) against the map and each bridge/ file's
# "Threads:" line, each header's section comments against where its
# functions are defined (and bridge.h's order against the layout's), each
# file's function prefix, and every file a comment names.  One line per
# finding, FILE:LINE: what.
lint-index:
	@echo "  INDEX"
	$(Q)scripts/dev/lint-index.py

# The import graph (scripts/dev/import-graph.py, read from the objects): no
# cycles between files, and the layers only look down (libk8s <- common <-
# bridge, admission; admission never includes bridge/).
lint-imports: all
	$(Q)scripts/dev/import-graph.py $(BUILD)

# The Helm chart manifests/chart is the one source of the in-cluster
# deployment: manifests renders the plain manifests from it
# (manifests/slurm-bridge.yaml, certs.yaml, admission/webhooks.yaml), and
# manifests-check fails when they differ from it or the chart does not lint
# (scripts/deploy/manifests.sh; Helm is built once into the cache, stack_helm).
manifests:
	$(Q)scripts/deploy/manifests.sh

manifests-check:
	$(Q)scripts/deploy/manifests.sh --check

# Every C file we write, in the style of .clang-format (Debian 12's
# clang-format, 14; the file says what it cannot express).
FMT_FILES	= $(sort $(LIBK8S_SRCS) $(BRIDGE_SRCS) $(ADMISSION_SRCS) \
		   $(TEST_SRCS) $(GROUP_TEST_SRCS) $(BENCH_SRCS) \
		   test/integration/check_k8s_it.c \
		   $(wildcard test/fuzz/*.c) $(wildcard include/*.h \
		   libk8s/*.h common/*.h bridge/*.h admission/*.h test/*.h \
		   bench/tools/*.h))
fmt:
	$(Q)clang-format -i $(FMT_FILES)

# Fails on a file that `make fmt` would change.
lint-fmt:
	$(Q)clang-format --dry-run -Werror $(FMT_FILES)

# The man pages (docs/man/): mandoc's checks of warning level and above;
# any message fails, whatever mandoc's exit status.
MAN_PAGES	= $(wildcard docs/man/*.[1-9])
lint-man:
	@echo "  MANDOC"
	$(Q)out=$$(mandoc -Tlint -Wwarning $(MAN_PAGES) 2>&1); rc=$$?; \
		if [ $$rc -ne 0 ] || [ -n "$$out" ]; then \
			echo "$$out"; exit 1; fi

# make install: the four programs in $(DESTDIR)$(SBINDIR) and the man
# pages in $(DESTDIR)$(MANDIR)/man5 and man8; make uninstall removes them.
# SBINDIR, not BINDIR: BINDIR is where the build leaves the programs
# (here, or build-slurm-<release>/ for another SLURM).
PREFIX		?= /usr/local
SBINDIR		?= $(PREFIX)/sbin
MANDIR		?= $(PREFIX)/share/man
PROGS		:= slurm-bridge slurm-bridge-admission slurm-bridge-epilog \
		   slurm-bridge-epilog-api
PROGS_FROM	= $(if $(SLURM_DELEGATE),build-slurm-$(SLURM),$(BINDIR))

install: all
	@echo "  INSTALL $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)"
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man8
	$(Q)install -m 0755 $(PROGS:%=$(PROGS_FROM)/%) $(DESTDIR)$(SBINDIR)
	$(Q)install -m 0644 $(wildcard docs/man/*.5) $(DESTDIR)$(MANDIR)/man5
	$(Q)install -m 0644 $(wildcard docs/man/*.8) $(DESTDIR)$(MANDIR)/man8

uninstall:
	$(Q)rm -f $(PROGS:%=$(DESTDIR)$(SBINDIR)/%) \
		$(patsubst docs/man/%,$(DESTDIR)$(MANDIR)/man5/%,$(wildcard docs/man/*.5)) \
		$(patsubst docs/man/%,$(DESTDIR)$(MANDIR)/man8/%,$(wildcard docs/man/*.8))

clean:
	rm -rf build build-asan build-fuzz build-slurm-* libk8s.a slurm-bridge slurm-bridge-admission \
		slurm-bridge-epilog slurm-bridge-epilog-api \
		compile_commands.json

.PHONY: in-cluster-test dra-node-test handoff-node-test node-up node-down images all check check-releases check-valgrind asan deps fresh-check cluster-up cluster-down integration bad-input fault bench bench-webhook \
	bridge-up e2e test demo demo-check fmt lint lint-tidy lint-cppcheck lint-imports lint-fmt lint-man lint-docs lint-index clean fuzz \
	manifests manifests-check install uninstall \
	workload-controllers

-include $(DEPS)
include bench/bench.mk
