-- Tests of contrib/job_submit.lua: lua5.1 contrib/job_submit_test.lua
-- (run by `go test ./bridge/tenant/ -run TestJobSubmitLua`). Prints "ok" or
-- the failures, one per line, and exits non-zero on a failure.
local dir = arg[0]:match("^(.*)/[^/]*$") or "."

local logs, user_msg = {}, nil
slurm = {
	SUCCESS = 0,
	ERROR = -1,
	ESLURM_INVALID_GRES = 2072,
	ESLURM_ACCESS_DENIED = 2002,
	log_info = function(fmt, ...) logs[#logs + 1] = "info: " .. string.format(fmt, ...) end,
	log_error = function(fmt, ...) logs[#logs + 1] = "error: " .. string.format(fmt, ...) end,
	log_debug = function() end,
	log_user = function(fmt, ...) user_msg = string.format(fmt, ...) end,
}

local path = os.tmpname()
os.remove(path)
local saved_getenv = os.getenv
os.getenv = function(k)
	if k == "GPUBRIDGE_GUARD_FILE" then
		return path
	end
	return saved_getenv(k)
end
dofile(dir .. "/job_submit.lua")
os.getenv = saved_getenv
local M = gpubridge_guard

-- SlurmUser is the uid in the status file slurmctld would have: 64030 here
-- (the test runs as whoever runs it, root included).
local status = os.tmpname()
local function write_status(content)
	local f = assert(io.open(status, "wb"))
	f:write(content)
	f:close()
	M.slurm_user_uid = nil
end
M.status_path = status
write_status("Name:\tslurmctld\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t64030\t64030\t64030\t64030\nGid:\t64030\t64030\t64030\t64030\n")

local failures = 0
local function fail(name, msg)
	failures = failures + 1
	print("FAIL " .. name .. ": " .. msg)
end
local function check(name, got, want)
	if got ~= want then
		fail(name, string.format("got %s, want %s", tostring(got), tostring(want)))
	end
end
local function contains(name, got, want)
	if type(got) ~= "string" or not string.find(got, want, 1, true) then
		fail(name, string.format("got %q, want it to contain %q", tostring(got), want))
	end
end

check("loaded with the file from the environment", M.path, path)
check("default path", string.match(io.open(dir .. "/job_submit.lua"):read("*a"), 'or "([^"]+)"'), "/var/lib/gpubridge/guard/tenants.table")

-- Adler-32 (RFC 1950 test vectors).
check("adler32 empty", M.adler32(""), 1)
check("adler32 Wikipedia", M.adler32("Wikipedia"), 0x11E60398)
check("adler32 abc", M.adler32("abc"), 0x024d0127)
do
	-- 100,000 bytes of 0xff: the largest sums per byte (chunked reduction).
	check("adler32 ff x 100000", M.adler32(string.rep("\255", 100000)), 0x149a302c)
end

-- mk builds a table file from a body.
local function mk(body, version, length, sum)
	return string.format("gpubridge-guard v%d length=%d adler32=%08x\n%s",
		version or 2, length or #body, sum or M.adler32(body), body)
end
local function write(content)
	local f = assert(io.open(path, "wb"))
	f:write(content)
	f:close()
end

local good = table.concat({
	"# comment",
	"tenant acme active",
	"gpu acme 1g.10gb 2",
	"gpu acme h100 2",
	"user acme alice",
	"user acme bob",
	"",
	"tenant globex deleting",
	"gpu globex h100 1",
	"user globex carol",
	"tenant cpuonly active",
	"user cpuonly dave",
	"tenant odd active",
	"gpu odd a100%2080gb 1",
	"user odd j.doe%40ex%25",
	"",
}, "\n")

-- Parsing.
do
	local ts, n = M.parse(mk(good))
	check("good table parses", type(ts), "table")
	check("good table count", n, 4)
	check("acme state", ts.acme.state, "active")
	check("acme h100", ts.acme.types.h100, 2)
	check("acme 1g.10gb", ts.acme.types["1g.10gb"], 2)
	check("acme alice", ts.acme.users.alice, true)
	check("globex deleting", ts.globex.state, "deleting")
	check("cpuonly no types", next(ts.cpuonly.types), nil)
	check("decoded type", ts.odd.types["a100 80gb"], 1)
	check("decoded user", ts.odd.users["j.doe@ex%"], true)
	local e, en = M.parse(mk(""))
	check("empty table parses", type(e), "table")
	check("empty table count", en, 0)
end

local refused = {
	{ "empty file", "", "the file is empty" },
	{ "no newline", "gpubridge-guard v2 length=0 adler32=00000001", "the header line is not terminated" },
	{ "no newline, not a header", "while true do end", "not a gpubridge guard table" },
	{ "Lua code", "while true do end\n", "not a gpubridge guard table" },
	{ "Lua code setting a global", "gpubridge_pwned = true\nreturn {}\n", "not a gpubridge guard table" },
	{ "os.exit", "os.exit(3)\n", "not a gpubridge guard table" },
	{ "Lua bytecode", string.dump(function() gpubridge_pwned = true end), "Lua bytecode" },
	{ "version 1 chunk", "-- gpubridge-guard v1 sha256:0123456789abcdef01234567\nreturn { version = 1, accounts = {} }\n", "version 1" },
	{ "unknown version", mk(good, 3), "version 3 is not known" },
	{ "truncated", mk(good):sub(1, -10), "the header says" },
	{ "longer than the header", mk(good) .. "tenant evil active\n", "the header says" },
	{ "checksum", mk(good, 2, #good, 12345), "checksum mismatch" },
	{ "upper-case hex", mk(good):gsub("adler32=(%x+)", function(h) return "adler32=" .. h:upper() .. "X" end), "not a gpubridge guard table" },
	{ "header with extra field", "gpubridge-guard v2 length=0 adler32=00000001 x\n", "not a gpubridge guard table" },
	{ "over the size limit", "gpubridge-guard v2 length=999999999999 adler32=00000001\n", "over the limit" },
	{ "unterminated last line", mk("tenant acme active"), "not terminated" },
	{ "unknown record", mk("tenant acme active\nrun acme os.exit\n"), "line 3: not a tenant, gpu, user, bookings or sub record" },
	{ "duplicate tenant", mk("tenant acme active\ntenant acme active\n"), "appears twice" },
	{ "duplicate type", mk("tenant acme active\ngpu acme h100 1\ngpu acme h100 2\n"), "appears twice" },
	{ "gpu before tenant", mk("gpu acme h100 1\n"), "before its tenant line" },
	{ "user before tenant", mk("user acme alice\n"), "before its tenant line" },
	{ "bad state", mk("tenant acme gone\n"), "want active or deleting" },
	{ "quota not a number", mk("tenant acme active\ngpu acme h100 -1\n"), "quota" },
	{ "quota too long", mk("tenant acme active\ngpu acme h100 1234567890123456\n"), "quota" },
	{ "too many fields", mk("tenant acme active extra\n"), "not a tenant, gpu, user, bookings or sub record" },
	{ "bookings before tenant", mk("bookings acme acme acme-resv gpubridge-\n"), "bookings for tenant \"acme\" before its tenant line" },
	{ "bookings twice", mk("tenant acme active\nbookings acme acme acme-resv gpubridge-\nbookings acme acme acme-resv gpubridge-\n"), "bookings of tenant \"acme\" appear twice" },
	{ "bookings short", mk("tenant acme active\nbookings acme acme acme-resv\n"), "not a tenant, gpu, user, bookings or sub record" },
	{ "double space", mk("tenant  acme active\n"), "field 2 is not a percent-encoded word" },
	{ "trailing space", mk("tenant acme active \n"), "field 4 is not a percent-encoded word" },
	{ "carriage return", mk("tenant acme active\r\n"), "field 3 is not a percent-encoded word" },
	{ "tab", mk("tenant\tacme active\n"), "not a percent-encoded word" },
	{ "bad escape", mk("tenant ac%zzme active\n"), "field 2 is not a percent-encoded word" },
	{ "short escape", mk("tenant acme% active\n"), "field 2 is not a percent-encoded word" },
	{ "unsafe byte", mk("tenant ac\"me active\n"), "field 2 is not a percent-encoded word" },
}
gpubridge_pwned = nil
for _, c in ipairs(refused) do
	local ts, why = M.parse(c[2])
	check("refused: " .. c[1], ts, nil)
	contains("reason: " .. c[1], why, c[3])
end
check("no code of a refused table ran", gpubridge_pwned, nil)

-- Loading the file: the last good table is kept, each problem logged once.
local function reset()
	M.state = { header = nil, tenants = nil, count = 0, rejected = nil, said = nil }
	logs = {}
end
local function log_count(what)
	local n = 0
	for _, l in ipairs(logs) do
		if string.find(l, what, 1, true) then
			n = n + 1
		end
	end
	return n
end

reset()
os.remove(path)
check("missing, never loaded: fail open", M.tenants(), nil)
check("missing, never loaded: twice", M.tenants(), nil)
check("missing logged once", log_count("does not exist; GPU requests are not checked"), 1)

reset()
write("while true do end\n")
check("code first: fail open", M.tenants(), nil)
M.tenants()
check("code first logged once", log_count("no good table was loaded before, so GPU requests are not checked (fail open)"), 1)
check("code first logged as an error", string.sub(logs[1] or "", 1, 6), "error:")

write(mk(good))
local ts = M.tenants()
check("good table loaded", ts and ts.acme and ts.acme.types.h100, 2)
check("loaded logged", log_count("loaded 4 tenant(s) from " .. path), 1)
check("same header: the cached table", M.tenants(), ts)

for _, c in ipairs({
	{ "code", "while true do end\n" },
	{ "bytecode", string.dump(function() gpubridge_pwned = true end) },
	{ "bad checksum", mk(good .. "tenant evil active\n", 2, #good + 19, 7) },
	{ "version 1", "-- gpubridge-guard v1 sha256:0123456789abcdef01234567\nreturn {}\n" },
	{ "unknown version", mk(good, 3) },
}) do
	logs = {}
	write(c[2])
	check("after " .. c[1] .. ": last good table", M.tenants(), ts)
	check("after " .. c[1] .. ": again", M.tenants(), ts)
	check("after " .. c[1] .. ": logged once", log_count("refused " .. path .. ": "), 1)
	check("after " .. c[1] .. ": says what is used", log_count("jobs are checked against the last good table (4 tenant(s))"), 1)
end
check("no code of a written table ran", gpubridge_pwned, nil)

logs = {}
os.remove(path)
check("removed: last good table", M.tenants(), ts)
check("removed logged", log_count("is missing; jobs are checked against the last good table"), 1)

write(mk("tenant acme active\ngpu acme h100 9\nuser acme alice\n"))
local ts2 = M.tenants()
check("new good table replaces", ts2 and ts2.acme.types.h100, 9)
check("new good table has one tenant", ts2 and ts2.globex, nil)

-- A file over 256 bytes whose header is the same is not re-read.
do
	local big = {}
	for i = 1, 200 do
		big[#big + 1] = string.format("tenant t%03d active\ngpu t%03d h100 %d\nuser t%03d alice\n", i, i, i, i)
	end
	local body = table.concat(big)
	write(mk(body))
	local tb = M.tenants()
	check("big table", tb and tb.t200 and tb.t200.types.h100, 200)
	check("big table count", M.state.count, 200)
end

-- GPU request strings.
local function entries(s)
	local es, bad = M.gres(s)
	local parts = {}
	for _, e in ipairs(es) do
		parts[#parts + 1] = e.name .. ":" .. (e.type or "-") .. ":" .. tostring(e.count)
	end
	for _, b in ipairs(bad) do
		parts[#parts + 1] = "?" .. b
	end
	return table.concat(parts, " ")
end
local gres_cases = {
	{ nil, "" },
	{ "", "" },
	{ "gres/gpu:h100:2", "gpu:h100:2" },
	{ "gres/gpu:1", "gpu:-:1" },
	{ "gres/gpu", "gpu:-:1" },
	{ "gres/gpu=1", "gpu:-:1" },
	{ "gres/gpu:h100=2", "gpu:h100:2" },
	{ "gres/gpu:h100", "gpu:h100:1" },
	{ "gres/gpu:1g.10gb:3", "gpu:1g.10gb:3" },
	{ "gpu:1", "gpu:-:1" },
	{ "gpu:2", "gpu:-:2" },
	{ "gpu", "gpu:-:1" },
	{ "GPU:1", "gpu:-:1" },
	{ "GRES/GPU:h100:1", "gpu:h100:1" },
	{ "gres:gpu:1", "gpu:-:1" },
	{ "gres/gpu:2K", "gpu:-:2048" },
	{ "gres/gpu:h100:1k", "gpu:h100:1024" },
	{ "gres/gpu:1kb", "gpu:-:1000" },
	{ "gres/gpu:1M", "gpu:-:1048576" },
	{ "gres/gpu:0", "" },
	{ "gres/gpu:h100:0", "" },
	{ "gres/gpu:0K", "" },
	{ "gres/gpu=0", "" },
	{ "gres/gpu::1", "gpu:-:1" },
	{ "gres/gpu:1.5", "gpu:1.5:1" },
	{ "gres/shard:1", "shard:-:1" },
	{ "gres/mps:100", "mps:-:100" },
	{ "gres/shard:h100:2", "shard:h100:2" },
	{ "gres/gpu:h100:1,gres/gpu:1", "gpu:h100:1 gpu:-:1" },
	{ "gres/gpu:h100:1, gres/gpu:1", "gpu:h100:1 gpu:-:1" },
	{ ",,gres/gpu:1,,", "gpu:-:1" },
	{ "gres/gpu:h100:1,gres/shard:1", "gpu:h100:1 shard:-:1" },
	{ "cpu=2", "cpu:-:2" },
	{ "cpu=2,gres/gpu=1", "cpu:-:2 gpu:-:1" },
	{ "license/foo=1", "" },
	{ "gres/nic:1", "nic:-:1" },
	{ "xgres/gpu:1", "?xgres/gpu:1" },
	{ "foo/gpu:1", "?foo/gpu:1" },
	{ "gres/gres/gpu:1", "?gres/gres/gpu:1" },
	{ "gres/gpu:h100:abc", "?gres/gpu:h100:abc" },
	{ "gres/gpu:h100:1:2", "?gres/gpu:h100:1:2" },
	{ "gres/gpu=", "?gres/gpu=" },
	{ "gres/gpu=x", "?gres/gpu=x" },
	{ "gres/gpu:h100:", "?gres/gpu:h100:" },
	{ "gres/gpu:h100:2=3", "?gres/gpu:h100:2=3" },
	{ "gres/g pu:1", "?gres/g pu:1" },
	{ "gres/shard:1gres/gpu:1", "shard:1gres/gpu:1" }, -- as Slurm reads it: a shard
}
for _, c in ipairs(gres_cases) do
	check("gres " .. tostring(c[1]), entries(c[1]), c[2])
end

-- The hooks.
reset()
write(mk(good))
local function submit(job, uid)
	user_msg = nil
	local rc = slurm_job_submit(job, {}, uid or 1000)
	if rc == slurm.SUCCESS then
		return "ok"
	end
	return tostring(rc) .. " " .. tostring(user_msg)
end
local function modify(desc, rec, uid)
	user_msg = nil
	local rc = slurm_job_modify(desc, rec, {}, uid or 1000)
	if rc == slurm.SUCCESS then
		return "ok"
	end
	return tostring(rc) .. " " .. tostring(user_msg)
end

local UNTYPED = "GPU request without a type refused for tenant acme"
local submits = {
	{ "typed within quota", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:h100:1" }, "ok" },
	{ "MIG typed", { account = "acme", user_name = "bob", tres_per_node = "gres/gpu:1g.10gb:1" }, "ok" },
	{ "typed --gpus", { account = "acme", user_name = "alice", tres_per_job = "gres/gpu:h100:2" }, "ok" },
	{ "typed --gpus-per-task with -c", { account = "acme", user_name = "alice", tres_per_task = "cpu=2,gres/gpu:h100=1" }, "ok" },
	{ "cpus only", { account = "acme", user_name = "alice", tres_per_task = "cpu=2" }, "ok" },
	{ "untyped gres", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }, UNTYPED },
	{ "untyped names types", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }, "Name a type, e.g. --gres=gpu:1g.10gb:1. Tenant acme may use: 1g.10gb (quota 2), h100 (quota 2)" },
	{ "untyped code", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }, "2072 " },
	{ "untyped no count", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu" }, UNTYPED },
	{ "untyped --gpus", { account = "acme", user_name = "alice", tres_per_job = "gres/gpu:2" }, UNTYPED },
	{ "untyped --gpus-per-task", { account = "acme", user_name = "alice", tres_per_task = "gres/gpu=1" }, UNTYPED },
	{ "untyped --gpus-per-socket", { account = "acme", user_name = "alice", tres_per_socket = "gres/gpu:1" }, UNTYPED },
	{ "untyped upper case", { account = "acme", user_name = "alice", tres_per_node = "gres/GPU:1" }, UNTYPED },
	{ "untyped with K", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1K" }, "e.g. --gres=gpu:1g.10gb:1024" },
	{ "empty type", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu::1" }, UNTYPED },
	{ "untyped beside typed", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:h100:1,gres/gpu:1" }, UNTYPED },
	{ "untyped in another field", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:h100:1", tres_per_job = "gres/gpu:1" }, UNTYPED },
	{ "old form untyped", { account = "acme", user_name = "alice", tres_per_node = "gpu:1" }, UNTYPED },
	{ "type outside quota", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:3g.40gb:1" }, "GPU type 3g.40gb is not in tenant acme's quota" },
	{ "type in another case", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:H100:1" }, "GPU type H100 is not in tenant acme's quota" },
	{ "shard", { account = "acme", user_name = "alice", tres_per_node = "gres/shard:1" }, "GPU sharing (gres/shard) refused for tenant acme: the tenant has no shard quota" },
	{ "shard beside typed", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:h100:1,gres/shard:2" }, "no shard quota" },
	{ "mps", { account = "acme", user_name = "alice", tres_per_node = "gres/mps:50" }, "GPU sharing (gres/mps) refused for tenant acme: the tenant has no mps quota" },
	{ "unreadable", { account = "acme", user_name = "alice", tres_per_node = "xgres/gpu:1" }, "cannot read the GPU request \"xgres/gpu:1\" for tenant acme" },
	{ "zero GPUs", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:0" }, "ok" },
	{ "no GPUs", { account = "acme", user_name = "alice" }, "ok" },
	{ "other GRES", { account = "acme", user_name = "alice", tres_per_node = "gres/nic:1" }, "ok" },
	{ "default account", { default_account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }, UNTYPED },
	{ "empty account uses the default", { account = "", default_account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }, UNTYPED },
	{ "upper-case account", { account = "ACME", user_name = "alice", tres_per_node = "gres/gpu:1" }, UNTYPED },
	{ "not a tenant", { account = "physics", user_name = "alice", tres_per_node = "gres/gpu:1" }, "ok" },
	{ "not a tenant shard", { account = "physics", user_name = "alice", tres_per_node = "gres/shard:1" }, "ok" },
	{ "deleting tenant", { account = "globex", user_name = "carol" }, "2002 gpubridge: tenant globex is being deleted" },
	{ "not a member", { account = "acme", user_name = "carol", tres_per_node = "gres/gpu:h100:1" }, "2002 gpubridge: user carol is not a member of tenant acme" },
	{ "no quota tenant", { account = "cpuonly", user_name = "dave", tres_per_node = "gres/gpu:h100:1" }, "tenant cpuonly has no GPU quota" },
	{ "no quota tenant shard", { account = "cpuonly", user_name = "dave", tres_per_node = "gres/shard:1" }, "Tenant cpuonly has no GPU quota." },
}
for _, c in ipairs(submits) do
	local got = submit(c[2], c[4])
	if c[3] == "ok" then
		check("submit " .. c[1], got, "ok")
	else
		contains("submit " .. c[1], got, c[3])
	end
end
check("root may submit as anyone", submit({ account = "acme", user_name = "root", tres_per_node = "gres/gpu:h100:1" }, 0), "ok")
contains("root is checked for GPUs", submit({ account = "acme", user_name = "root", tres_per_node = "gres/gpu:1" }, 0), UNTYPED)
logs = {}
submit({ account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" })
check("a refusal is logged in slurmctld.log", log_count("gpubridge guard: refused job of user alice in account acme: gpubridge: " .. UNTYPED), 1)

-- The submit hook routes accepted jobs only.
do
	local routed = {}
	gpubridge_burst_route = function(job) routed[#routed + 1] = job.account end
	submit({ account = "acme", user_name = "alice", tres_per_node = "gres/gpu:h100:1" })
	submit({ account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" })
	submit({ account = "physics", user_name = "alice" })
	gpubridge_burst_route = nil
	check("routed accepted jobs", table.concat(routed, ","), "acme,physics")
end

-- Updates: job_desc holds what the update sets, job_rec the job as it is.
local untyped_elsewhere = { job_id = 37, account = "physics", qos = "normal", partition = "pool", tres_per_node = "gres/gpu:1" }
local typed_acme = { job_id = 38, account = "acme", qos = "acme", partition = "pool", tres_per_node = "gres/gpu:h100:1" }
local legacy_acme = { job_id = 39, account = "acme", qos = "acme", partition = "pool", tres_per_node = "gres/gpu:1" }
local typed_elsewhere = { job_id = 40, account = "physics", qos = "normal", partition = "pool", tres_per_job = "gres/gpu:h100:1" }
local modifies = {
	{ "move untyped job into a tenant", { account = "acme", user_name = "alice" }, untyped_elsewhere, "gpubridge: job 37: " .. UNTYPED },
	{ "move untyped job, upper case", { account = "ACME", user_name = "alice" }, untyped_elsewhere, UNTYPED },
	{ "move by empty account to the default", { account = "", default_account = "acme", user_name = "alice" }, untyped_elsewhere, UNTYPED },
	{ "move code", { account = "acme", user_name = "alice" }, untyped_elsewhere, "2072 " },
	{ "move typed job into a tenant", { account = "acme", user_name = "alice" }, typed_elsewhere, "ok" },
	{ "move typed job with a type outside the quota", { account = "cpuonly", user_name = "dave" }, typed_elsewhere, "tenant cpuonly has no GPU quota" },
	{ "move into a deleting tenant", { account = "globex", user_name = "carol" }, typed_elsewhere, "2002 gpubridge: job 40: tenant globex is being deleted; jobs may not move into it" },
	{ "move by a non-member", { account = "acme", user_name = "carol" }, typed_elsewhere, "2002 gpubridge: job 40: user carol is not a member of tenant acme" },
	{ "move and fix the request at once", { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:h100:1" }, untyped_elsewhere, "ok" },
	{ "move and clear the request", { account = "acme", user_name = "alice", tres_per_node = "" }, untyped_elsewhere, "ok" },
	{ "move out of a tenant", { account = "physics", user_name = "alice" }, legacy_acme, "ok" },
	{ "add an untyped request", { user_name = "alice", tres_per_node = "gres/gpu:1" }, typed_acme, "gpubridge: job 38: " .. UNTYPED },
	{ "add an untyped request as scontrol passes TresPerJob", { user_name = "alice", tres_per_job = "gpu:2" }, typed_acme, UNTYPED },
	{ "add an untyped --gpus-per-task", { user_name = "alice", tres_per_task = "gres/gpu=1" }, typed_acme, UNTYPED },
	{ "add a type outside the quota", { user_name = "alice", tres_per_node = "gres/gpu:3g.40gb:1" }, typed_acme, "GPU type 3g.40gb is not in tenant acme's quota" },
	{ "add a shard", { user_name = "alice", tres_per_node = "gres/gpu:h100:1,gres/shard:1" }, typed_acme, "no shard quota" },
	{ "add an unreadable request", { user_name = "alice", tres_per_node = "gres/gpu:h100:1:2" }, typed_acme, "cannot read the GPU request" },
	{ "change to another typed request", { user_name = "alice", tres_per_node = "gres/gpu:1g.10gb:2" }, typed_acme, "ok" },
	{ "the record's other field is kept", { user_name = "alice", tres_per_node = "gres/gpu:h100:1" },
		{ job_id = 41, account = "acme", tres_per_job = "gres/gpu:1" }, UNTYPED },
	{ "an update that sets nothing checked", { user_name = "alice", comment = "x" }, legacy_acme, "ok" },
	{ "a QOS change checks the job", { user_name = "alice", qos = "normal" }, legacy_acme, UNTYPED },
	{ "a partition change checks the job", { user_name = "alice", partition = "cpu" }, legacy_acme, UNTYPED },
	{ "update of a deleting tenant's job in place", { user_name = "carol", partition = "pool" },
		{ job_id = 42, account = "globex", tres_per_node = "gres/gpu:h100:1" }, "ok" },
	{ "not a tenant", { account = "physics2", user_name = "alice" }, untyped_elsewhere, "ok" },
}
for _, c in ipairs(modifies) do
	local got = modify(c[2], c[3], c[5])
	if c[4] == "ok" then
		check("modify " .. c[1], got, "ok")
	else
		contains("modify " .. c[1], got, c[4])
	end
end
check("root may update anything", modify({ account = "acme" }, untyped_elsewhere, 0), "ok")

-- The on-demand tier: a tenant's user may not ask for it (submit or
-- update); root, SlurmUser (the burst controller's token) and the
-- submit-time route may put jobs there.
local SELF_QOS = "2002 gpubridge: tenant acme may not request the on-demand QOS ondemand: gpubridge's burst controller moves tenant acme's jobs there when its quota holds them, within its burst cap and budget."
local SELF_PART = "2002 gpubridge: tenant acme may not request the on-demand partition ondemand"
local h100 = "gres/gpu:h100:1"
local ondemand_submits = {
	{ "--qos=ondemand -p ondemand", { account = "acme", user_name = "alice", qos = "ondemand", partition = "ondemand", tres_per_node = h100 }, SELF_QOS },
	{ "--qos=ondemand", { account = "acme", user_name = "alice", qos = "ondemand", tres_per_node = h100 }, SELF_QOS },
	{ "-p ondemand", { account = "acme", user_name = "alice", partition = "ondemand", tres_per_node = h100 }, SELF_PART },
	{ "-p pool,ondemand", { account = "acme", user_name = "alice", partition = "pool,ondemand", tres_per_node = h100 }, SELF_PART },
	{ "-p ondemand,pool", { account = "acme", user_name = "alice", partition = "ondemand,pool", tres_per_node = h100 }, SELF_PART },
	{ "-p 'pool, ondemand'", { account = "acme", user_name = "alice", partition = "pool, ondemand", tres_per_node = h100 }, SELF_PART },
	{ "--qos=OnDemand", { account = "acme", user_name = "alice", qos = "OnDemand", tres_per_node = h100 }, SELF_QOS },
	{ "-p ONDEMAND", { account = "acme", user_name = "alice", partition = "ONDEMAND", tres_per_node = h100 }, SELF_PART },
	{ "a CPU-only job too", { account = "acme", user_name = "alice", qos = "ondemand", partition = "ondemand" }, SELF_QOS },
	{ "by the default account", { default_account = "acme", user_name = "alice", qos = "ondemand", partition = "ondemand" }, SELF_QOS },
	{ "upper-case account", { account = "ACME", user_name = "alice", partition = "ondemand" }, SELF_PART },
	{ "a cpu-only tenant", { account = "cpuonly", user_name = "dave", partition = "ondemand" }, "tenant cpuonly may not request the on-demand partition ondemand" },
	{ "the pool", { account = "acme", user_name = "alice", partition = "pool", tres_per_node = h100 }, "ok" },
	{ "the tenant's QOS", { account = "acme", user_name = "alice", qos = "acme", partition = "pool", tres_per_node = h100 }, "ok" },
	{ "a partition whose name contains ondemand", { account = "acme", user_name = "alice", partition = "ondemand2,xondemand", tres_per_node = h100 }, "ok" },
	{ "a QOS whose name contains ondemand", { account = "acme", user_name = "alice", qos = "ondemand-x", tres_per_node = h100 }, "ok" },
	{ "not a tenant", { account = "physics", user_name = "alice", qos = "ondemand", partition = "ondemand", tres_per_node = "gres/gpu:1" }, "ok" },
	{ "root", { account = "acme", user_name = "alice", qos = "ondemand", partition = "ondemand", tres_per_node = h100 }, "ok", 0 },
	{ "SlurmUser", { account = "acme", user_name = "alice", qos = "ondemand", partition = "ondemand", tres_per_node = h100 }, "ok", 64030 },
	{ "another uid", { account = "acme", user_name = "alice", qos = "ondemand", partition = "ondemand", tres_per_node = h100 }, SELF_QOS, 64031 },
	{ "root's GPU request still checked", { account = "acme", user_name = "alice", qos = "ondemand", partition = "ondemand", tres_per_node = "gres/gpu:1" }, UNTYPED, 0 },
}
for _, c in ipairs(ondemand_submits) do
	local got = submit(c[2], c[4])
	if c[3] == "ok" then
		check("on-demand submit " .. c[1], got, "ok")
	else
		contains("on-demand submit " .. c[1], got, c[3])
	end
end
logs = {}
submit({ account = "acme", user_name = "alice", qos = "ondemand", partition = "ondemand", tres_per_node = h100 })
check("an on-demand refusal is logged", log_count("gpubridge guard: refused job of user alice in account acme: gpubridge: tenant acme may not request the on-demand QOS ondemand"), 1)

-- gpubridge's own submit-time route (contrib/job_submit_burst.lua) puts the
-- job there after the checks: accepted.
do
	local conf = os.tmpname()
	local f = assert(io.open(conf, "wb"))
	f:write("pool=pool\nondemand=ondemand\naccount=acme\n")
	f:close()
	dofile(dir .. "/job_submit_burst.lua")
	gpubridge_burst.conf_path = conf
	local j = { account = "acme", user_name = "alice", tres_per_node = h100 }
	check("routed by job_submit_burst.lua: accepted", submit(j), "ok")
	check("routed by job_submit_burst.lua: to pool,ondemand", j.partition, "pool,ondemand")
	local k = { account = "acme", user_name = "alice", partition = "pool,ondemand", tres_per_node = h100 }
	contains("the route's partitions asked for by the user", submit(k), SELF_PART)
	gpubridge_burst_route = nil
	os.remove(conf)
end

local moved_acme = { job_id = 50, account = "acme", qos = "ondemand", partition = "ondemand", tres_per_node = h100 }
local routed_acme = { job_id = 51, account = "acme", qos = "acme", partition = "pool,ondemand", tres_per_node = h100 }
local ondemand_elsewhere = { job_id = 52, account = "physics", qos = "ondemand", partition = "ondemand", tres_per_node = h100 }
local IN_OD = "is in the on-demand QOS ondemand, where only gpubridge's burst controller puts tenants' jobs, within each tenant's burst cap and budget"
local ondemand_modifies = {
	{ "qos=ondemand partition=ondemand", { user_name = "alice", qos = "ondemand", partition = "ondemand" }, typed_acme, "2002 gpubridge: job 38: tenant acme may not request the on-demand QOS ondemand" },
	{ "qos=ondemand", { user_name = "alice", qos = "ondemand" }, typed_acme, "job 38: tenant acme may not request the on-demand QOS ondemand" },
	{ "partition=ondemand", { user_name = "alice", partition = "ondemand" }, typed_acme, "job 38: tenant acme may not request the on-demand partition ondemand" },
	{ "partition=pool,ondemand", { user_name = "alice", partition = "pool,ondemand" }, typed_acme, "the on-demand partition ondemand" },
	{ "a moved job's GPUs", { user_name = "alice", tres_per_node = "gres/gpu:h100:4" }, moved_acme, "2002 gpubridge: job 50 " .. IN_OD .. "; its GPU request may not change there" },
	{ "a moved job's partition", { user_name = "alice", partition = "pool" }, moved_acme, "job 50 " .. IN_OD .. "; its partition may not change there" },
	{ "a moved job's account", { user_name = "dave", account = "cpuonly" }, moved_acme, "2002 gpubridge: job 50 " .. IN_OD .. "; its account may not change there (tenant cpuonly)" },
	{ "moved into a tenant from the on-demand QOS", { user_name = "alice", account = "acme" }, ondemand_elsewhere, "job 52 " .. IN_OD .. "; its account may not change there" },
	{ "moved into a tenant from the on-demand partition", { user_name = "alice", account = "acme" },
		{ job_id = 53, account = "physics", qos = "normal", partition = "pool,ondemand", tres_per_node = h100 }, "job 53 may run in the on-demand partition ondemand; it may not move into tenant acme's account" },
	{ "a moved job leaves the on-demand tier", { user_name = "alice", qos = "acme", partition = "pool" }, moved_acme, "ok" },
	{ "a moved job's time limit", { user_name = "alice", time_limit = 10 }, moved_acme, "ok" },
	{ "a moved job's comment", { user_name = "alice", comment = "x" }, moved_acme, "ok" },
	{ "a routed job's GPUs", { user_name = "alice", tres_per_node = "gres/gpu:1g.10gb:1" }, routed_acme, "ok" },
	{ "a routed job to the pool only", { user_name = "alice", partition = "pool" }, routed_acme, "ok" },
	{ "a routed job asked back to the on-demand partition", { user_name = "alice", partition = "pool,ondemand" }, routed_acme, "the on-demand partition ondemand" },
	{ "a routed job's account", { user_name = "dave", account = "cpuonly" }, routed_acme, "job 51 may run in the on-demand partition ondemand; it may not move into tenant cpuonly's account" },
	{ "a routed job out of the tenants", { user_name = "alice", account = "physics" }, routed_acme, "ok" },
	{ "not a tenant", { user_name = "alice", qos = "ondemand", partition = "ondemand" }, typed_elsewhere, "ok" },
	{ "root", { user_name = "alice", qos = "ondemand", partition = "ondemand" }, typed_acme, "ok", 0 },
	{ "SlurmUser (the burst controller)", { user_name = "alice", qos = "ondemand", partition = "ondemand", admin_comment = "gpubridge:burst" }, typed_acme, "ok", 64030 },
	{ "SlurmUser may change a moved job", { user_name = "alice", tres_per_node = "gres/gpu:1" }, moved_acme, "ok", 64030 },
	{ "another uid", { user_name = "alice", qos = "ondemand", partition = "ondemand" }, typed_acme, "may not request the on-demand QOS", 64031 },
}
for _, c in ipairs(ondemand_modifies) do
	local got = modify(c[2], c[3], c[5])
	if c[4] == "ok" then
		check("on-demand modify " .. c[1], got, "ok")
	else
		contains("on-demand modify " .. c[1], got, c[4])
	end
end

-- SlurmUser's uid comes from slurmctld's status file; unreadable: only root.
check("SlurmUser's uid", M.slurm_uid(), 64030)
check("read_uid: effective uid", M.read_uid(status), 64030)
write_status("Name:\tx\nUid:\t100\t200\t200\t200\n")
check("read_uid: the effective of real and effective", M.slurm_uid(), 200)
write_status("Uid:\t300\t301\t301\t301\n")
check("read_uid: first line", M.slurm_uid(), 301)
check("uid 200 no longer privileged", M.privileged(200), false)
write_status("no uid here\n")
logs = {}
check("no uid: nobody but root", M.slurm_uid(), nil)
check("no uid: root", M.privileged(0), true)
check("no uid: 64030", M.privileged(64030), false)
check("no uid logged", log_count("cannot read SlurmUser's uid from " .. status), 1)
M.status_path = status .. ".missing"
M.slurm_user_uid = nil
check("missing status file: nil", M.slurm_uid(), nil)
contains("missing status file: the controller's uid refused", modify({ user_name = "alice", qos = "ondemand" }, typed_acme, 64030), "may not request the on-demand QOS")
M.status_path = status
write_status("Uid:\t64030\t64030\t64030\t64030\n")

-- A site that renames the tier sets the variables in slurmctld's environment.
do
	local env = { GPUBRIDGE_GUARD_FILE = path, GPUBRIDGE_ONDEMAND_QOS = "b5burst", GPUBRIDGE_ONDEMAND_PARTITION = "b5od" }
	os.getenv = function(k) return env[k] end
	dofile(dir .. "/job_submit.lua")
	check("GPUBRIDGE_ONDEMAND_QOS", M.ondemand_qos, "b5burst")
	check("GPUBRIDGE_ONDEMAND_PARTITION", M.ondemand_partition, "b5od")
	contains("renamed QOS refused", submit({ account = "acme", user_name = "alice", qos = "b5burst" }), "may not request the on-demand QOS b5burst")
	contains("renamed partition refused", submit({ account = "acme", user_name = "alice", partition = "pool,b5od" }), "may not request the on-demand partition b5od")
	check("the old names are other QOS now", submit({ account = "acme", user_name = "alice", qos = "ondemand" }), "ok")
	env.GPUBRIDGE_ONDEMAND_QOS, env.GPUBRIDGE_ONDEMAND_PARTITION = "", nil
	dofile(dir .. "/job_submit.lua")
	check("an empty variable is the default", M.ondemand_qos, "ondemand")
	check("an unset variable is the default", M.ondemand_partition, "ondemand")
	os.getenv = saved_getenv
end
logs = {}
modify({ account = "acme", user_name = "alice" }, untyped_elsewhere)
check("an update's refusal is logged with the job", log_count("gpubridge guard: refused update of job 37 (user alice, account acme): "), 1)

-- Bookings: a tenant's job that names only its own bookings is switched
-- to its reservation QOS.
reset()
local booked = good:gsub("user acme bob\n", "user acme bob\nbookings acme acme acme-resv gpubridge-\n")
	:gsub("user globex carol\n", "user globex carol\nbookings globex globex globex-resv gpubridge-\n")
write(mk(booked))
do
	local ts = M.tenants()
	check("bookings record parsed", ts and ts.acme.bookings and ts.acme.bookings.resv_qos, "acme-resv")
	check("bookings record: tenant QOS", ts.acme.bookings.qos, "acme")
	check("bookings record: prefix", ts.acme.bookings.prefix, "gpubridge-")
	check("no bookings record", ts.cpuonly.bookings, nil)
end
slurm.reservations = {
	["gpubridge-5"] = { accounts = "acme" },
	["gpubridge-6"] = { accounts = "globex" },
	["gpubridge-7"] = { accounts = "ACME,physics" },
	["gpubridge-8"] = { accounts = "-globex" },
	["gpubridge-05"] = { accounts = "acme" },
	["site-maint"] = { accounts = "acme" },
}
local routed = {}
gpubridge_burst_route = function(job) routed[#routed + 1] = tostring(job.reservation) end
-- bsubmit submits a job of acme (user alice, one h100) with the fields of
-- extra and returns "ok QOS" (the QOS after the hook) or the refusal.
local function bsubmit(extra, uid)
	local job = { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:h100:1" }
	for k, v in pairs(extra) do
		job[k] = v
	end
	local got = submit(job, uid)
	if got == "ok" then
		return "ok " .. tostring(job.qos)
	end
	return got
end
local bsubmits = {
	{ "own booking, no QOS", { reservation = "gpubridge-5" }, "ok acme-resv" },
	{ "own booking, tenant QOS", { reservation = "gpubridge-5", qos = "acme" }, "ok acme-resv" },
	{ "own booking, tenant QOS in upper case", { reservation = "gpubridge-5", qos = "ACME" }, "ok acme-resv" },
	{ "own booking, empty QOS", { reservation = "gpubridge-5", qos = "" }, "ok acme-resv" },
	{ "own booking, reservation QOS asked", { reservation = "gpubridge-5", qos = "acme-resv" }, "ok acme-resv" },
	{ "own booking with spaces", { reservation = " gpubridge-5 " }, "ok acme-resv" },
	{ "two own bookings", { reservation = "gpubridge-5,gpubridge-7" }, "ok acme-resv" },
	{ "own booking listing more accounts", { reservation = "gpubridge-7" }, "ok acme-resv" },
	{ "own booking, another QOS chosen", { reservation = "gpubridge-5", qos = "normal" }, "ok normal" },
	{ "another tenant's booking", { reservation = "gpubridge-6" }, "ok nil" },
	{ "own and another tenant's", { reservation = "gpubridge-5,gpubridge-6" }, "ok nil" },
	{ "a reservation excluding accounts", { reservation = "gpubridge-8" }, "ok nil" },
	{ "leading zero is not a booking id", { reservation = "gpubridge-05" }, "ok nil" },
	{ "a booking slurmctld does not know", { reservation = "gpubridge-9" }, "ok nil" },
	{ "not a booking", { reservation = "site-maint" }, "ok nil" },
	{ "prefix only", { reservation = "gpubridge-" }, "ok nil" },
	{ "no reservation", {}, "ok nil" },
	{ "no reservation, reservation QOS asked", { qos = "acme-resv" }, "ok acme-resv" },
	{ "reservation QOS outside a booking", { reservation = "site-maint", qos = "acme-resv" },
		"2002 gpubridge: QOS acme-resv is for jobs inside tenant acme's bookings (reservations gpubridge-<id>, `gpubridge show bookings tenant=acme`); reservation site-maint is not one of them" },
	{ "reservation QOS in another tenant's booking", { reservation = "gpubridge-6", qos = "acme-resv" }, "reservation gpubridge-6 is not one of them" },
}
for _, c in ipairs(bsubmits) do
	local got = bsubmit(c[2], c[4])
	if string.sub(c[3], 1, 3) == "ok " then
		check("booking submit " .. c[1], got, c[3])
	else
		contains("booking submit " .. c[1], got, c[3])
	end
end
check("root may use the reservation QOS anywhere", bsubmit({ reservation = "site-maint", qos = "acme-resv" }, 0), "ok acme-resv")
contains("the guard's checks come first", submit({ account = "acme", user_name = "alice", reservation = "gpubridge-5", tres_per_node = "gres/gpu:1" }), UNTYPED)
do
	local job = { account = "globex", user_name = "carol", reservation = "gpubridge-6" }
	contains("a deleting tenant's booking is refused", submit(job), "tenant globex is being deleted")
	local other = { account = "physics", user_name = "alice", reservation = "gpubridge-5" }
	check("not a tenant: untouched", submit(other), "ok")
	check("not a tenant: QOS", other.qos, nil)
	local cpu = { account = "cpuonly", user_name = "dave", reservation = "gpubridge-5" }
	submit(cpu)
	check("a tenant without a bookings record: untouched", cpu.qos, nil)
end
logs = {}
bsubmit({ reservation = "gpubridge-5" })
check("a switch is logged", log_count("gpubridge guard: job of user alice in account acme names booking(s) gpubridge-5: QOS acme -> acme-resv"), 1)
routed = {}
bsubmit({ reservation = "gpubridge-5" })
bsubmit({ reservation = "site-maint" })
bsubmit({})
check("jobs switched to a booking are not burst-routed", table.concat(routed, ","), "site-maint,nil")
gpubridge_burst_route = nil
do
	local saved = slurm.reservations
	slurm.reservations = nil
	check("no reservation table: the prefix decides", bsubmit({ reservation = "gpubridge-6" }), "ok acme-resv")
	check("no reservation table: not a booking", bsubmit({ reservation = "site-maint" }), "ok nil")
	slurm.reservations = saved
end

-- bmodify updates a pending job of acme and returns "ok QOS" (what the
-- update sets) or the refusal.
local function bmodify(desc, rec, uid)
	local d = { user_name = "alice" }
	for k, v in pairs(desc) do
		d[k] = v
	end
	local r = { job_id = 50, account = "acme", qos = "acme", partition = "pool", tres_per_node = "gres/gpu:h100:1" }
	for k, v in pairs(rec or {}) do
		r[k] = v
	end
	local got = modify(d, r, uid)
	if got == "ok" then
		return "ok " .. tostring(d.qos)
	end
	return got
end
local bmodifies = {
	{ "name an own booking", { reservation = "gpubridge-5" }, nil, "ok acme-resv" },
	{ "name an own booking with the tenant QOS", { reservation = "gpubridge-5", qos = "acme" }, nil, "ok acme-resv" },
	{ "name an own booking, another QOS", { reservation = "gpubridge-5" }, { qos = "normal" }, "ok nil" },
	{ "leave the booking", { reservation = "" }, { qos = "acme-resv", resv_name = "gpubridge-5" }, "ok acme" },
	{ "move to another tenant's booking", { reservation = "gpubridge-6" }, { qos = "acme-resv" }, "ok acme" },
	{ "move to a site reservation", { reservation = "site-maint" }, { qos = "acme-resv" }, "ok acme" },
	{ "reservation QOS for a site reservation", { qos = "acme-resv" }, { resv_name = "site-maint" }, "reservation site-maint is not one of them" },
	{ "reservation QOS and a site reservation at once", { qos = "acme-resv", reservation = "site-maint" }, nil, "reservation site-maint is not one of them" },
	{ "reservation QOS, reservation unknown", { qos = "acme-resv" }, nil, "ok acme-resv" },
	{ "an update that does not touch the reservation", { comment = "x" }, { qos = "acme-resv", resv_name = "gpubridge-5" }, "ok nil" },
	{ "a time limit change in the booking", { time_limit = 5 }, { qos = "acme-resv" }, "ok nil" },
}
for _, c in ipairs(bmodifies) do
	local got = bmodify(c[2], c[3], c[5])
	if string.sub(c[4], 1, 3) == "ok " then
		check("booking modify " .. c[1], got, c[4])
	else
		contains("booking modify " .. c[1], got, c[4])
	end
end
check("root may set the reservation QOS anywhere", bmodify({ qos = "acme-resv", reservation = "site-maint" }, nil, 0), "ok acme-resv")
check("root naming a booking switches too", bmodify({ reservation = "gpubridge-5" }, nil, 0), "ok acme-resv")
slurm.reservations = nil

-- No table: everything is allowed (fail open).
reset()
os.remove(path)
check("no table: submit allowed", submit({ account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }), "ok")
check("no table: modify allowed", modify({ account = "acme", user_name = "alice" }, untyped_elsewhere), "ok")

-- A code table after a good one: jobs still checked against the good one.
reset()
write(mk(good))
contains("good table refuses", submit({ account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }), UNTYPED)
write("return { version = 2, accounts = {} }\n")
contains("code table: still refused", submit({ account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }), UNTYPED)
contains("code table: modify still refused", modify({ account = "acme", user_name = "alice" }, untyped_elsewhere), UNTYPED)

-- A site's own job_submit.lua that includes the guard
-- (contrib/job_submit_site.lua.example, with the package's path pointed at
-- this directory): the site's rules run, then the guard.
do
	reset()
	write(mk(good))
	local f = assert(io.open(dir .. "/job_submit_site.lua.example", "rb"))
	local src = f:read("*a")
	f:close()
	local n
	src, n = string.gsub(src, '"/usr/share/gpubridge/slurm/job_submit.lua"', string.format("%q", dir .. "/job_submit.lua"))
	check("the example includes the package's guard", n, 1)
	slurm.NO_VAL = 4294967294
	os.getenv = function(k)
		if k == "GPUBRIDGE_GUARD_FILE" then
			return path
		end
		return saved_getenv(k)
	end
	assert(loadstring(src, "job_submit_site.lua.example"))()
	os.getenv = saved_getenv
	check("the site's hook replaced the guard's", slurm_job_submit ~= gpubridge_guard.job_submit, true)
	local j = { account = "acme", user_name = "alice", tres_per_node = "gres/gpu:1" }
	contains("site script: the guard refuses", submit(j), UNTYPED)
	check("site script: the site's rule ran first", j.time_limit, 60)
	local k = { account = "acme", user_name = "alice", tres_per_node = h100 }
	check("site script: accepted", submit(k), "ok")
	contains("site script: self-burst refused", submit({ account = "acme", user_name = "alice", qos = "ondemand" }), "may not request the on-demand QOS")
	contains("site script: modify checked", modify({ account = "acme", user_name = "alice" }, untyped_elsewhere), UNTYPED)
	check("site script: root's modify", modify({ account = "acme" }, untyped_elsewhere, 0), "ok")
end

-- Sub-accounts (issue 25): an account under a tenant's account is refused
-- (new jobs and moves into it), until reconcile removes it.
do
	reset()
	write(mk(good .. "sub acmesub acme\n"))
	local ts, n = M.parse(mk(good .. "sub acmesub acme\n"))
	check("sub parses", ts.acmesub.state, "sub")
	check("sub of", ts.acmesub.of, "acme")
	check("sub is not counted as a tenant", n, 4)
	contains("sub: new job refused", submit({ account = "acmesub", user_name = "alice", tres_per_node = "gres/gpu:h100:4" }),
		"2002 gpubridge: account acmesub is under tenant acme's account")
	contains("sub: refused without GPUs too", submit({ account = "ACMESUB", user_name = "mallory" }), "Submit with -A acme")
	contains("sub: move into it refused", modify({ account = "acmesub" }, { job_id = 7, account = "acme", user_name = "alice" }),
		"job 7: gpubridge: account acmesub is under tenant acme's account")
	check("sub: moving out to the tenant", modify({ account = "acme" }, { job_id = 7, account = "acmesub", user_name = "alice", tres_per_node = "gres/gpu:h100:1" }), "ok")
	check("sub before its tenant", select(2, M.parse(mk("sub x acme\n" .. good))), "line 2: sub-account of tenant \"acme\" before its tenant line")
	contains("sub that is a tenant", select(2, M.parse(mk(good .. "sub globex acme\n"))), "is a tenant or appears twice")
	contains("sub of a sub", select(2, M.parse(mk(good .. "sub s1 acme\nsub s2 s1\n"))), "before its tenant line")
	contains("tenant after a sub of that name", select(2, M.parse(mk(good .. "sub s1 acme\ntenant s1 active\n"))), "appears twice")
	contains("gpu for a sub", select(2, M.parse(mk(good .. "sub s1 acme\ngpu s1 h100 1\n"))), "before its tenant line")
end

os.remove(path)
os.remove(status)
if failures > 0 then
	os.exit(1)
end
print("ok")
