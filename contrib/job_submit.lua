--[[
gpubridge job_submit guard (JobSubmitPlugins=lua; Slurm's Lua is 5.1).

Slurm does not hold a job that asks for GPUs without a type
(--gres=gpu:1, --gpus=1) to a typed limit such as
GrpTRES=gres/gpu:h100=16: it is a documented design limitation of typed GRES
limits. gpubridge quotas are typed, so this script refuses, for the accounts
of gpubridge tenants:
  * GPU requests without a type, naming the types the tenant may use;
  * GPU types that are not in the tenant's quota;
  * any new job of a tenant being deleted (`gpubridge delete tenant`);
  * jobs of a user who is no longer a member of the tenant (their
    association is removed once their jobs have ended).
Accounts that are not gpubridge tenants are never touched.

The tenants are not in this file: `gpubridge apply` writes them to DATA_FILE
(a generated Lua table, replaced atomically). This script reads it on each
submission, re-parsing only when its first line (which carries a digest of
the content) has changed, so new tenants and quota types take effect
without restarting slurmctld. Slurm itself reloads job_submit.lua when the
script file changes. If DATA_FILE is missing or unreadable, jobs are
allowed and the problem is logged once (fail open: gpubridge not applied
yet must not stop the cluster).

Install: copy to the directory of slurm.conf as job_submit.lua, set
JobSubmitPlugins=lua, and point DATA_FILE (or gpubridge's --guard-file) at
the same path on the slurmctld host.
]]

-- Where `gpubridge apply --guard-file` writes the tenants (the environment
-- of slurmctld may override it with GPUBRIDGE_GUARD_FILE).
local DATA_FILE = os.getenv("GPUBRIDGE_GUARD_FILE") or "/etc/slurm/gpubridge-tenants.lua"

local cache = { header = nil, data = nil }
local warned = nil

local function warn_once(msg)
	if warned ~= msg then
		slurm.log_error("gpubridge guard: %s", msg)
		warned = msg
	end
end

-- load_tenants returns the accounts table, or nil when there is none.
local function load_tenants()
	local f = io.open(DATA_FILE, "r")
	if not f then
		warn_once(DATA_FILE .. " does not exist; GPU requests are not checked (run gpubridge apply)")
		cache.header, cache.data = nil, nil
		return nil
	end
	local header = f:read("*l")
	f:close()
	if header ~= nil and header == cache.header and cache.data ~= nil then
		return cache.data
	end
	local chunk, err = loadfile(DATA_FILE)
	if not chunk then
		warn_once("cannot parse " .. DATA_FILE .. ": " .. tostring(err))
		return cache.data
	end
	setfenv(chunk, {}) -- the data file is a table, nothing else
	local ok, data = pcall(chunk)
	if not ok or type(data) ~= "table" or data.version ~= 1 or type(data.accounts) ~= "table" then
		warn_once(DATA_FILE .. " is not a version 1 gpubridge tenants table")
		return cache.data
	end
	cache.header, cache.data = header, data.accounts
	warned = nil
	return cache.data
end

-- gpu_requests returns the GPU requests of one tres_per_* string as a list
-- of { type = "h100" or nil, count = n }. Slurm writes these strings as
-- "gres/gpu:h100:2,gres/shard:1"; older forms without "gres/" are accepted.
local function gpu_requests(s, out)
	if s == nil or s == "" then
		return out
	end
	for item in string.gmatch(s, "[^,]+") do
		item = string.gsub(item, "^%s+", "")
		item = string.gsub(item, "^gres[/:]", "")
		local parts = {}
		for p in string.gmatch(item, "[^:]+") do
			table.insert(parts, p)
		end
		if parts[1] == "gpu" then
			local typ, count = nil, 1
			if parts[2] ~= nil then
				if string.match(parts[2], "^%d+$") then
					count = tonumber(parts[2])
				else
					typ = parts[2]
					if parts[3] ~= nil then
						count = tonumber(string.match(parts[3], "^%d+")) or 1
					end
				end
			end
			if count > 0 then
				table.insert(out, { type = typ, count = count })
			end
		end
	end
	return out
end

local function allowed_list(entry)
	local names = {}
	for typ, n in pairs(entry.types or {}) do
		table.insert(names, typ)
	end
	table.sort(names)
	local parts = {}
	for _, typ in ipairs(names) do
		table.insert(parts, typ .. " (quota " .. tostring(entry.types[typ]) .. ")")
	end
	return names, table.concat(parts, ", ")
end

-- check_gpus returns an error message, or nil when every GPU request of
-- the job is typed and within the tenant's types.
local function check_gpus(account, entry, fields)
	local reqs = {}
	for i = 1, 4 do -- not ipairs: unset fields are nil holes
		gpu_requests(fields[i], reqs)
	end
	if #reqs == 0 then
		return nil
	end
	local names, list = allowed_list(entry)
	for _, r in ipairs(reqs) do
		if #names == 0 then
			return string.format("gpubridge: tenant %s has no GPU quota, so it may not request GPUs", account)
		end
		if r.type == nil then
			return string.format(
				"gpubridge: GPU request without a type refused for tenant %s: Slurm cannot hold untyped GPUs to the tenant's typed quota. " ..
				"Name a type, e.g. --gres=gpu:%s:%d. Tenant %s may use: %s",
				account, names[1], r.count, account, list)
		end
		if (entry.types or {})[r.type] == nil then
			return string.format("gpubridge: GPU type %s is not in tenant %s's quota. Tenant %s may use: %s",
				r.type, account, account, list)
		end
	end
	return nil
end

-- refuse tells the user why and returns Slurm's error code: an invalid
-- GRES specification for GPU requests, access denied otherwise.
local function refuse(msg, code)
	slurm.log_info("%s", msg)
	slurm.log_user("%s", msg)
	return code or slurm.ERROR
end

local function refuse_gres(msg)
	return refuse(msg, slurm.ESLURM_INVALID_GRES)
end

local function refuse_access(msg)
	return refuse(msg, slurm.ESLURM_ACCESS_DENIED)
end

-- tenant_of returns the job's account (lower-cased, as Slurm stores it) and
-- its tenant entry, or nil when the account is not a gpubridge tenant or the
-- tenant table is not available. fallback is used when the job names no
-- account.
local function tenant_of(account, fallback)
	local accounts = load_tenants()
	if accounts == nil then
		return nil
	end
	if account == nil or account == "" then
		account = fallback
	end
	if account == nil then
		return nil
	end
	account = string.lower(account)
	local entry = accounts[account]
	if entry == nil then
		return nil
	end
	return account, entry
end

local function guard_submit(job_desc, part_list, submit_uid)
	local account, entry = tenant_of(job_desc.account, job_desc.default_account)
	if entry == nil then
		return slurm.SUCCESS
	end
	if entry.state == "deleting" then
		return refuse_access(string.format("gpubridge: tenant %s is being deleted; new jobs are refused (running jobs continue)", account))
	end
	local user = job_desc.user_name
	if submit_uid ~= 0 and user ~= nil and entry.users ~= nil and not entry.users[user] then
		return refuse_access(string.format("gpubridge: user %s is not a member of tenant %s", user, account))
	end
	local msg = check_gpus(account, entry, {
		job_desc.tres_per_node, job_desc.tres_per_job, job_desc.tres_per_socket, job_desc.tres_per_task,
	})
	if msg ~= nil then
		return refuse_gres(msg)
	end
	return slurm.SUCCESS
end

-- Optional submit-time burst routing (contrib/job_submit_burst.lua, see
-- docs/burst.md): loaded when installed beside this script; it routes only
-- accounts listed in its own configuration file, and only jobs the guard
-- accepted.
pcall(dofile, "/etc/slurm/job_submit_burst.lua")

function slurm_job_submit(job_desc, part_list, submit_uid)
	local rc, msg = guard_submit(job_desc, part_list, submit_uid)
	if rc == slurm.SUCCESS and gpubridge_burst_route then
		gpubridge_burst_route(job_desc, part_list, submit_uid)
	end
	return rc, msg
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	if modify_uid == 0 then
		return slurm.SUCCESS -- root and gpubridge's controllers
	end
	local fields = { job_desc.tres_per_node, job_desc.tres_per_job, job_desc.tres_per_socket, job_desc.tres_per_task }
	local any = false
	for i = 1, 4 do
		if fields[i] ~= nil and fields[i] ~= "" then
			any = true
		end
	end
	if not any then
		return slurm.SUCCESS
	end
	local account, entry = tenant_of(job_desc.account, job_rec.account)
	if entry == nil then
		return slurm.SUCCESS
	end
	local msg = check_gpus(account, entry, fields)
	if msg ~= nil then
		return refuse_gres(msg)
	end
	return slurm.SUCCESS
end

slurm.log_info("gpubridge guard loaded; tenants from %s", DATA_FILE)
return slurm.SUCCESS
