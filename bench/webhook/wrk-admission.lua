-- wrk script of the webhook bench: POSTs AdmissionReviews, prints a line.
--
-- wrk script for bench/webhook/run.sh: POSTs one AdmissionReview over
-- and over, optionally paced to a fixed request rate, and prints the result
-- as one machine-readable line.
--
-- Environment (read when the script loads, in every wrk Lua state):
--   BENCH_BODY   file holding the request body (required)
--   BENCH_RATE   requests/s for each wrk thread; 0 or unset = as fast as
--                the connections go (saturation)
--   BENCH_CLOSE  1 = send "Connection: close", a new TLS connection for
--                every request (to show what a handshake costs)
--
-- Pacing: wrk 4 has no rate flag, only the delay() hook, called before each
-- request on a connection. Each thread keeps a schedule of send times
-- 1/BENCH_RATE apart (CLOCK_MONOTONIC through LuaJIT's ffi); delay() books
-- the next free time and returns how long to wait for it. The rate is exact
-- on average, whatever the latency, as long as the thread has a connection
-- idle; a late server is caught up with, not forgiven. wrk starts a
-- request's clock when it writes it, after the delay and after the
-- connection's TLS handshake, so latencies are of requests alone; but a
-- request that had to wait for a free connection (all of them busy with a
-- late server: at 1000 req/s on 10 connections, a stall over 10 ms) is timed
-- from when it got one, not from its booked time, so such stalls count once,
-- not for every request queued behind them (wrk2 would correct this).
--
-- done() prints one line, "BENCH_RESULT {json}", with the wrk summary, the
-- latency percentiles in ms, the status codes seen, responses that were not
-- an allowed AdmissionReview, and responses that closed the connection.

local body_file = os.getenv("BENCH_BODY")
local rate = tonumber(os.getenv("BENCH_RATE") or "0") or 0
local close = os.getenv("BENCH_CLOSE") == "1"

if body_file then
	local f = assert(io.open(body_file, "rb"), "cannot open " .. body_file)
	wrk.body = f:read("*a")
	f:close()
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if close then
	wrk.headers["Connection"] = "close"
end

-- Per-thread counters, collected by done() through thread:get().
statuses = {}       -- status code (as a string) -> count
not_allowed = 0     -- 200 responses without "allowed":true
conn_close = 0      -- responses carrying "Connection: close"

function response(status, headers, resp_body)
	local k = tostring(status)
	statuses[k] = (statuses[k] or 0) + 1
	if status == 200 and not string.find(resp_body, '"allowed"%s*:%s*true') then
		not_allowed = not_allowed + 1
	end
	local c = headers["Connection"] or headers["connection"]
	if c and string.lower(c) == "close" then
		conn_close = conn_close + 1
	end
end

if rate > 0 then
	local ffi = require("ffi")
	ffi.cdef [[
		typedef struct { long tv_sec; long tv_nsec; } bench_timespec_t;
		int clock_gettime(int clk, bench_timespec_t *ts);
	]]
	local ts = ffi.new("bench_timespec_t")
	local CLOCK_MONOTONIC = 1
	local function now_ms()
		ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
		return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
	end
	local period = 1000 / rate
	local slot = nil

	function delay()
		local now = now_ms()
		if slot == nil then
			slot = now
		else
			slot = slot + period
		end
		local d = slot - now
		if d < 0 then
			return 0
		end
		return d
	end
end

local threads = {}

function setup(thread)
	table.insert(threads, thread)
end

local function ms(us)
	return string.format("%.3f", us / 1000)
end

function done(summary, latency, requests)
	local st, na, cc = {}, 0, 0
	for _, t in ipairs(threads) do
		for code, n in pairs(t:get("statuses")) do
			st[code] = (st[code] or 0) + n
		end
		na = na + t:get("not_allowed")
		cc = cc + t:get("conn_close")
	end
	local non2xx = 0
	local parts = {}
	for code, n in pairs(st) do
		local c = tonumber(code)
		if c < 200 or c > 299 then
			non2xx = non2xx + n
		end
		table.insert(parts, string.format('"%s":%d', code, n))
	end
	table.sort(parts)
	local e = summary.errors
	local secs = summary.duration / 1e6
	io.write(string.format(
		'BENCH_RESULT {"requests":%d,"duration_s":%.3f,"rps":%.1f,' ..
		'"latency_ms":{"min":%s,"mean":%s,"p50":%s,"p90":%s,"p99":%s,' ..
		'"p99.9":%s,"max":%s,"stdev":%s},' ..
		'"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
		'"statuses":{%s},"non_2xx":%d,"not_allowed":%d,"conn_close":%d,' ..
		'"bytes":%d}\n',
		summary.requests, secs, summary.requests / secs,
		ms(latency.min), ms(latency.mean), ms(latency:percentile(50)),
		ms(latency:percentile(90)), ms(latency:percentile(99)),
		ms(latency:percentile(99.9)), ms(latency.max), ms(latency.stdev),
		e.connect, e.read, e.write, e.status, e.timeout,
		table.concat(parts, ","), non2xx, na, cc, summary.bytes))
end
