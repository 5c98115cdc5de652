--[[
gpubridge: submit-time routing to the on-demand tier, for sites that prefer
no burst controller. It is an ALTERNATIVE to `gpubridge serve`'s burst
controller: use one or the other for a tenant, not both.

What it does: a job of a listed account that names no partition (or the
pool) is submitted to "pool,ondemand". Slurm tries the pool first (higher
PriorityTier) and starts the job in the on-demand partition when the pool
cannot take it now. The on-demand partition must carry a partition QOS
(gpubridge config render --ondemand-partition-qos ondemand) whose GrpTRES
names every GPU type: a partition QOS limit overrides the same limit of the
job's QOS, so the tenant's quota does not hold the job there.

Trade-offs (measured on the testbed, see docs/burst.md):
  - no per-tenant cap and no budget at submission: the partition QOS bounds
    all on-demand work together (MaxTRESPerAccount gives every tenant the
    same cap); a budget is enforced only by taking the account out of the
    list file;
  - a job routed this way keeps the tenant QOS, so its on-demand GPUs also
    count against the tenant's quota: while it runs, the tenant's next
    pool-only job waits (QOSGrpGRES) and new jobs go on demand although
    reserved GPUs may be idle;
  - the choice is made once, at submission, by slurmctld's scheduler: a job
    that could have waited a minute for its quota may start on demand;
  - no admin comment marker: billing still sees partition=ondemand.

Opt-out (same as the controller): --comment containing gpubridge:noburst,
an explicit -p/--partition other than the pool, or an explicit --qos other
than the tenant's.

Enable: install it as /etc/slurm/job_submit_burst.lua, include it from
job_submit.lua (near the top) and call it just before slurm_job_submit's
final `return slurm.SUCCESS`:

    pcall(dofile, "/etc/slurm/job_submit_burst.lua")
    ...
    if gpubridge_burst_route then gpubridge_burst_route(job_desc, part_list, submit_uid) end

and list the accounts in /etc/slurm/gpubridge_burst_submit.conf:

    # gpubridge submit-time burst (one key=value per line)
    pool=pool
    ondemand=ondemand
    qos_prefix=
    account=acme
    account=physics

No file, or no account= line, routes nothing.
]]

gpubridge_burst = gpubridge_burst or {}
local M = gpubridge_burst

M.conf_path = M.conf_path or "/etc/slurm/gpubridge_burst_submit.conf"
M.token = "gpubridge:noburst"

-- read_conf reads the list file at each submission (a few lines), so that a
-- change takes effect without reconfiguring slurmctld.
function M.read_conf(path)
  local c = { pool = "pool", ondemand = "ondemand", qos_prefix = "", accounts = {} }
  local f = io.open(path or M.conf_path, "r")
  if not f then
    return c
  end
  for line in f:lines() do
    line = line:gsub("#.*$", "")
    local k, v = line:match("^%s*([%w_]+)%s*=%s*(%S*)%s*$")
    if k == "account" and v ~= "" then
      c.accounts[v] = true
    elseif k == "pool" or k == "ondemand" or k == "qos_prefix" then
      c[k] = v
    end
  end
  f:close()
  return c
end

local function has_token(comment)
  if comment == nil then
    return false
  end
  local lc = string.lower(comment)
  for w in lc:gmatch("[^%s,;]+") do
    if w == M.token then
      return true
    end
  end
  return false
end

-- decide returns the partition list to set, or nil and why the job is left
-- alone. It is pure, for tests.
function M.decide(job, c)
  local account = job.account
  if account == nil or account == "" then
    account = job.default_account
  end
  if account == nil or not c.accounts[account] then
    return nil, "account not listed"
  end
  if job.partition ~= nil and job.partition ~= "" and job.partition ~= c.pool then
    return nil, "explicit partition " .. job.partition
  end
  if has_token(job.comment) then
    return nil, "comment has " .. M.token
  end
  if job.qos ~= nil and job.qos ~= "" and job.qos ~= c.qos_prefix .. account then
    return nil, "explicit QOS " .. job.qos
  end
  return c.pool .. "," .. c.ondemand, "routed"
end

function gpubridge_burst_route(job_desc, part_list, submit_uid)
  local ok, err = pcall(function()
    local c = M.read_conf()
    local parts, why = M.decide(job_desc, c)
    if parts ~= nil then
      job_desc.partition = parts
      if slurm and slurm.log_debug then
        slurm.log_debug("gpubridge burst: job of %s routed to %s", tostring(job_desc.account or job_desc.default_account), parts)
      end
    end
  end)
  if not ok and slurm and slurm.log_error then
    -- Never fail a submission because of the routing: the job stays in the pool.
    slurm.log_error("gpubridge burst: routing skipped: %s", tostring(err))
  end
  if slurm then
    return slurm.SUCCESS
  end
  return 0
end
