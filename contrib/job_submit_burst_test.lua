-- Tests of contrib/job_submit_burst.lua: lua5.1 contrib/job_submit_burst_test.lua
-- (run by `go test ./cmd/gpubridge/ -run TestJobSubmitBurstLua`).
local dir = arg[0]:match("^(.*)/[^/]*$") or "."
dofile(dir .. "/job_submit_burst.lua")
local M = gpubridge_burst

local failures = 0
local function check(name, got, want)
  if got ~= want then
    failures = failures + 1
    print(string.format("FAIL %s: got %s, want %s", name, tostring(got), tostring(want)))
  end
end

local c = { pool = "pool", ondemand = "ondemand", qos_prefix = "", accounts = { acme = true } }
local cases = {
  { "listed, no partition", { account = "acme" }, "pool,ondemand" },
  { "default account", { default_account = "acme" }, "pool,ondemand" },
  { "explicit pool", { account = "acme", partition = "pool" }, "pool,ondemand" },
  { "tenant QOS", { account = "acme", qos = "acme" }, "pool,ondemand" },
  { "not listed", { account = "physics" }, nil },
  { "explicit partition", { account = "acme", partition = "cpu" }, nil },
  { "noburst comment", { account = "acme", comment = "run 4 gpubridge:noburst" }, nil },
  { "noburst case", { account = "acme", comment = "GPUBRIDGE:NOBURST" }, nil },
  { "other QOS", { account = "acme", qos = "debug" }, nil },
}
for _, tc in ipairs(cases) do
  local got = M.decide(tc[2], c)
  check(tc[1], got, tc[3])
end

-- QOS prefix
local cp = { pool = "pool", ondemand = "ondemand", qos_prefix = "t_", accounts = { acme = true } }
check("prefixed tenant QOS", M.decide({ account = "acme", qos = "t_acme" }, cp), "pool,ondemand")
check("unprefixed is another QOS", M.decide({ account = "acme", qos = "acme" }, cp), nil)

-- The conf file.
local path = os.tmpname()
local f = io.open(path, "w")
f:write("# comment\npool=p1\nondemand = od1\nqos_prefix=t_\naccount=acme # trailing\naccount=beta\n\n")
f:close()
local rc = M.read_conf(path)
os.remove(path)
check("conf pool", rc.pool, "p1")
check("conf ondemand", rc.ondemand, "od1")
check("conf prefix", rc.qos_prefix, "t_")
check("conf acme", rc.accounts.acme, true)
check("conf beta", rc.accounts.beta, true)
local none = M.read_conf("/nonexistent/gpubridge")
check("no file routes nothing", next(none.accounts), nil)

-- The hook sets the partition and never fails a submission.
slurm = { SUCCESS = 0, ERROR = -1, log_debug = function() end, log_error = function() end }
M.conf_path = "/nonexistent/gpubridge"
local job = { account = "acme" }
check("hook without conf", gpubridge_burst_route(job, {}, 1000), 0)
check("hook left partition", job.partition, nil)
M.read_conf = function() error("boom") end
check("hook survives errors", gpubridge_burst_route({ account = "acme" }, {}, 1000), 0)

if failures > 0 then
  os.exit(1)
end
print("ok")
