--[[
gpubridge job_submit guard (JobSubmitPlugins=lua; Slurm's Lua is 5.1).

Slurm does not hold a job that asks for GPUs without a type
(--gres=gpu:1, --gpus=1) to a typed limit such as
GrpTRES=gres/gpu:h100=16: it is a documented design limitation of typed GRES
limits. gpubridge quotas are typed, so this script refuses, for the accounts
of gpubridge tenants:
  * GPU requests without a type, naming the types the tenant may use;
  * GPU types that are not in the tenant's quota;
  * GPU sharing (gres/shard, gres/mps): a tenant has no sharing quota, and
    the typed GPU quota does not count shares;
  * GPU requests the guard cannot read (it never guesses in the user's
    favour);
  * any new job of a tenant being deleted (`gpubridge delete tenant`);
  * any new job in (and any move of a job into) an account under a
    tenant's account: tenants have no sub-accounts, and a job there would
    escape the tenant's users (and, before the tenant's account carried
    the tenant QOS, its quota). gpubridge's reconcile lists the ones it
    finds in the table (sub records) and removes them once their jobs
    end; one made since the last reconcile is not known here yet, and its
    jobs inherit the tenant QOS from the tenant's account;
  * jobs of a user who is no longer a member of the tenant (their
    association is removed once their jobs have ended);
  * a user's own request of the on-demand tier (the on-demand QOS, or a
    partition list that names the on-demand partition): users'
    associations allow the on-demand QOS only so that gpubridge's burst
    controller can move their quota-held jobs there within the tenant's
    burst cap and budget; asked for directly, it would skip both. The
    submit-time route (job_submit_burst.lua) runs after the checks and may
    put a job there; a job the controller moved keeps its account,
    partition and GPU request (it may leave the on-demand QOS).
It checks new jobs (slurm_job_submit) and updates of pending jobs
(slurm_job_modify: `scontrol update`, slurmrestd's POST /job/{id}) alike:
an update is checked on the job as it will be after the update (the job
record merged with the fields the update sets), so moving a pending
untyped-GPU job into a tenant's account, moving a job into a tenant being
deleted, or adding an untyped request to a tenant's job are refused.
Accounts that are not gpubridge tenants are never touched. root and
SlurmUser (the uid slurmctld runs as; the burst controller's slurmrestd
token is SlurmUser's) may update any job and submit to the on-demand tier.

The tenants are not in this file: `gpubridge apply` and the daemon's
reconcile write them to a tenant table (M.path below), a text file that is
data, never code: it is parsed with string patterns, nothing in it is ever
loaded or run. Its first line carries a version, the length and an Adler-32
checksum of the rest; a file that is not a version 2 table (Lua code,
bytecode, a truncated or corrupted file, an unknown version) is refused and
logged in slurmctld.log, and jobs keep being checked against the last good
table. Only when no good table was ever loaded (a new slurmctld, or a new
version of this script, before gpubridge wrote one) are jobs allowed, and
that is logged too (fail open: gpubridge not applied yet must not stop the
cluster). The file is re-read only when its first line changes, so new
tenants and quota types take effect without restarting slurmctld; Slurm
itself reloads job_submit.lua when the script changes.

Install: copy to the directory of slurm.conf as job_submit.lua and set
JobSubmitPlugins=lua. gpubridge writes the table to tenants.guardFile
(default in contrib/gpubridge.yaml.example:
/var/lib/gpubridge/guard/tenants.table, the path below); slurmctld's
environment may point GPUBRIDGE_GUARD_FILE elsewhere. The directory must be
writable by gpubridge only and readable by SlurmUser. The on-demand QOS and
partition are gpubridge's defaults (tenants.onDemandQOS and
tenants.onDemandPartition: ondemand); a site that renames them sets
GPUBRIDGE_ONDEMAND_QOS and GPUBRIDGE_ONDEMAND_PARTITION in slurmctld's
environment to the same values as gpubridge's configuration.

To keep a site's own job_submit.lua, include this file from it instead of
replacing it, and call gpubridge_guard.job_submit and
gpubridge_guard.job_modify at the end of the site's hooks (docs/install.md).
]]

gpubridge_guard = gpubridge_guard or {}
local M = gpubridge_guard

M.path = os.getenv("GPUBRIDGE_GUARD_FILE") or "/var/lib/gpubridge/guard/tenants.table"
M.version = 2
M.max_bytes = 64 * 1024 * 1024 -- as tenant.GuardMaxBytes

-- setting returns the environment variable k, or def when it is unset or
-- empty (an empty name would switch a check off).
local function setting(k, def)
	local v = os.getenv(k)
	if v == nil or v == "" then
		return def
	end
	return v
end

-- The on-demand tier, as gpubridge's tenants.onDemandQOS and
-- tenants.onDemandPartition (config defaults: ondemand).
M.ondemand_qos = setting("GPUBRIDGE_ONDEMAND_QOS", "ondemand")
M.ondemand_partition = setting("GPUBRIDGE_ONDEMAND_PARTITION", "ondemand")

-- Where the uid slurmctld runs as (SlurmUser) is read from.
M.status_path = "/proc/self/status"

-- The last good table and what was said about the file (each message is
-- logged once, until another one replaces it).
M.state = { header = nil, tenants = nil, count = 0, rejected = nil, said = nil }

local function say(level, msg)
	local st = M.state
	if st.said == msg then
		return
	end
	st.said = msg
	if level == "error" then
		slurm.log_error("gpubridge guard: %s", msg)
	else
		slurm.log_info("gpubridge guard: %s", msg)
	end
end

local function trim(s)
	return (string.gsub(string.gsub(s, "^%s+", ""), "%s+$", ""))
end

---------------------------------------------------------------------------
-- The tenant table (format: bridge/tenant/guard.go).
---------------------------------------------------------------------------

-- adler32 returns the Adler-32 checksum of s (RFC 1950), computed with
-- exact integer arithmetic on Lua 5.1 numbers (no bit library).
function M.adler32(s)
	local a, b = 1, 0
	local n = #s
	local i = 1
	while i <= n do
		local j = math.min(i + 3999, n)
		local bytes = { string.byte(s, i, j) }
		for k = 1, #bytes do
			a = a + bytes[k]
			b = b + a
		end
		-- 4000 bytes cannot overflow 2^53 before reducing.
		a = a % 65521
		b = b % 65521
		i = j + 1
	end
	return b * 65536 + a
end

-- decode reverses the table's percent-encoding; nil for anything else.
local function decode(field)
	if field == "" or not string.find(field, "^[A-Za-z0-9._~@+%-%%]+$") then
		return nil
	end
	if string.find((string.gsub(field, "%%%x%x", "")), "%%") then
		return nil -- a % not followed by two hex digits
	end
	return (string.gsub(field, "%%(%x%x)", function(h)
		return string.char(tonumber(h, 16))
	end))
end

local function digits(s, max)
	if s == nil or #s == 0 or #s > max or not string.find(s, "^%d+$") then
		return nil
	end
	return tonumber(s)
end

-- parse_header returns version, length and checksum of a header line, or
-- nil and why it is not one.
function M.parse_header(h)
	if h == nil then
		return nil, "the file is empty"
	end
	if string.sub(h, 1, 4) == "\27Lua" then
		return nil, "it is Lua bytecode: the table is data and is never run"
	end
	if string.sub(h, 1, 22) == "-- gpubridge-guard v1 " then
		return nil, "it is a version 1 table (a Lua chunk), refused: tables are data since version 2 and are never run; run gpubridge apply to rewrite it"
	end
	local v, l, c = string.match(h, "^gpubridge%-guard v(%d+) length=(%d+) adler32=(%x+)$")
	v, l = digits(v, 9), digits(l, 15)
	if v == nil or l == nil or #c ~= 8 or string.lower(c) ~= c then
		return nil, string.format("it is not a gpubridge guard table (first line %q); it is never run", string.sub(h, 1, 60))
	end
	return v, l, tonumber(c, 16)
end

-- parse_body returns the tenants of a table's content (after the header),
-- keyed by account, and their number, or nil and the first problem.
--   tenants[name] = { state = "active"|"deleting", types = { [type] = quota },
--                     users = { [user] = true },
--                     bookings = { qos = "acme", resv_qos = "acme-resv",
--                                  prefix = "gpubridge-" } or nil }
function M.parse_body(body)
	if #body > 0 and string.sub(body, -1) ~= "\n" then
		return nil, "the last line is not terminated"
	end
	local tenants, count, n = {}, 0, 1
	for line in string.gmatch(body, "([^\n]*)\n") do
		n = n + 1
		if line ~= "" and string.sub(line, 1, 1) ~= "#" then
			local f = {}
			for raw in string.gmatch(line .. " ", "([^ ]*) ") do
				local v = decode(raw)
				if v == nil then
					return nil, string.format("line %d: field %d is not a percent-encoded word", n, #f + 1)
				end
				f[#f + 1] = v
			end
			local kind = f[1]
			if kind == "sub" and #f == 3 then
				local t = tenants[f[3]]
				if t == nil or t.state == "sub" then
					return nil, string.format("line %d: sub-account of tenant %q before its tenant line", n, f[3])
				end
				if tenants[f[2]] ~= nil then
					return nil, string.format("line %d: sub-account %q is a tenant or appears twice", n, f[2])
				end
				tenants[f[2]] = { state = "sub", of = f[3], types = {}, users = {} }
			elseif kind == "tenant" and #f == 3 then
				if tenants[f[2]] ~= nil then
					return nil, string.format("line %d: tenant %q appears twice", n, f[2])
				end
				if f[3] ~= "active" and f[3] ~= "deleting" then
					return nil, string.format("line %d: tenant %q has state %q (want active or deleting)", n, f[2], f[3])
				end
				tenants[f[2]] = { state = f[3], types = {}, users = {} }
				count = count + 1
			elseif kind == "gpu" and #f == 4 then
				local t = tenants[f[2]]
				if t == nil or t.state == "sub" then
					return nil, string.format("line %d: gpu for tenant %q before its tenant line", n, f[2])
				end
				if t.types[f[3]] ~= nil then
					return nil, string.format("line %d: gpu type %q of tenant %q appears twice", n, f[3], f[2])
				end
				local q = digits(f[4], 15)
				if q == nil then
					return nil, string.format("line %d: quota: %q is not a number of at most 15 digits", n, f[4])
				end
				t.types[f[3]] = q
			elseif kind == "user" and #f == 3 then
				local t = tenants[f[2]]
				if t == nil or t.state == "sub" then
					return nil, string.format("line %d: user for tenant %q before its tenant line", n, f[2])
				end
				t.users[f[3]] = true
			elseif kind == "bookings" and #f == 5 then
				local t = tenants[f[2]]
				if t == nil or t.state == "sub" then
					return nil, string.format("line %d: bookings for tenant %q before its tenant line", n, f[2])
				end
				if t.bookings ~= nil then
					return nil, string.format("line %d: bookings of tenant %q appear twice", n, f[2])
				end
				t.bookings = { qos = f[3], resv_qos = f[4], prefix = f[5] }
			else
				return nil, string.format("line %d: not a tenant, gpu, user, bookings or sub record", n)
			end
		end
	end
	return tenants, count
end

-- unterminated says why a file without a newline in its first bytes is
-- refused.
function M.unterminated(first)
	local v, why = M.parse_header(first ~= "" and first or nil)
	if v ~= nil then
		return "the header line is not terminated"
	end
	return why
end

-- parse returns the tenants of a whole table file's content, or nil and why
-- it is refused.
function M.parse(data)
	local nl = string.find(data, "\n", 1, true)
	if nl == nil then
		return nil, M.unterminated(data)
	end
	local v, l, c = M.parse_header(string.sub(data, 1, nl - 1))
	if v == nil then
		return nil, l
	end
	return M.check_content(v, l, c, string.sub(data, nl + 1))
end

-- check_content verifies a body against its header and parses it.
function M.check_content(version, length, sum, body)
	if version ~= M.version then
		return nil, string.format("version %d is not known to this job_submit.lua (it reads version %d)", version, M.version)
	end
	if length > M.max_bytes then
		return nil, string.format("length %d is over the limit of %d bytes", length, M.max_bytes)
	end
	if #body ~= length then
		return nil, string.format("the header says %d bytes follow it, the file has %d", length, #body)
	end
	local got = M.adler32(body)
	if got ~= sum then
		return nil, string.format("checksum mismatch: adler32 %08x in the header, %08x of the content", sum, got)
	end
	return M.parse_body(body)
end

-- read reads the table file: its header line and, when the header is new,
-- the content it announces (never more). It returns header, tenants, count
-- or header, nil, why.
local function read(f, known)
	local first = f:read(256) or ""
	local nl = string.find(first, "\n", 1, true)
	if nl == nil then
		return first, nil, M.unterminated(first)
	end
	local header = string.sub(first, 1, nl - 1)
	if known(header) then
		return header, nil, nil
	end
	local v, l, c = M.parse_header(header)
	if v == nil then
		return header, nil, l
	end
	if v == M.version and l <= M.max_bytes then
		local body = string.sub(first, nl + 1)
		if #body < l then
			body = body .. (f:read(l - #body) or "")
		end
		if #body == l and f:read(0) ~= nil then
			body = body .. "+" -- more than the header says: refused below
		end
		return header, M.check_content(v, l, c, body)
	end
	return header, M.check_content(v, l, c, "")
end

-- tenants returns the table to check jobs against: the file's when it is a
-- good table, else the last good one, else nil (no table was ever loaded:
-- jobs are allowed).
function M.tenants()
	local st = M.state
	local f = io.open(M.path, "rb")
	if f == nil then
		if st.tenants ~= nil then
			say("error", string.format("%s is missing; jobs are checked against the last good table (%d tenant(s))", M.path, st.count))
		else
			say("error", M.path .. " does not exist; GPU requests are not checked until gpubridge writes it (fail open)")
		end
		return st.tenants
	end
	local header, tenants, count = read(f, function(h)
		return (h == st.header and st.tenants ~= nil) or h == st.rejected
	end)
	f:close()
	if tenants == nil and count == nil then
		return st.tenants -- the header is the one we have (or have refused)
	end
	if tenants == nil then
		st.rejected = header
		if st.tenants ~= nil then
			say("error", string.format("refused %s: %s; jobs are checked against the last good table (%d tenant(s))", M.path, count, st.count))
		else
			say("error", string.format("refused %s: %s; no good table was loaded before, so GPU requests are not checked (fail open)", M.path, count))
		end
		return st.tenants
	end
	st.header, st.tenants, st.count, st.rejected = header, tenants, count, nil
	say("info", string.format("loaded %d tenant(s) from %s", count, M.path))
	return tenants
end

---------------------------------------------------------------------------
-- GPU requests.
---------------------------------------------------------------------------

local SUFFIX = {
	[""] = 1,
	k = 1024, kib = 1024, kb = 1000,
	m = 1024 ^ 2, mib = 1024 ^ 2, mb = 1000 ^ 2,
	g = 1024 ^ 3, gib = 1024 ^ 3, gb = 1000 ^ 3,
	t = 1024 ^ 4, tib = 1024 ^ 4, tb = 1000 ^ 4,
	p = 1024 ^ 5, pib = 1024 ^ 5, pb = 1000 ^ 5,
}

-- count_of reads a count as Slurm does: digits and an optional suffix
-- (k, M, G, ... in any case); nil when s is not a count.
local function count_of(s)
	local d, suf = string.match(s, "^(%d+)(%a*)$")
	if d == nil then
		return nil
	end
	local m = SUFFIX[string.lower(suf)]
	if m == nil then
		return nil
	end
	return tonumber(d) * m
end

local function split(s, sep)
	local out = {}
	for p in string.gmatch(s .. sep, "([^" .. sep .. "]*)" .. sep) do
		out[#out + 1] = p
	end
	return out
end

-- entry reads NAME[:TYPE][:COUNT] or NAME[:TYPE]=COUNT; nil when it is
-- none of these.
local function entry(s)
	local body, eq = s, nil
	local i = string.find(s, "=", 1, true)
	if i ~= nil then
		body, eq = string.sub(s, 1, i - 1), string.sub(s, i + 1)
	end
	local f = split(body, ":")
	local name = string.lower(f[1])
	if not string.find(name, "^[%w_%.%-]+$") then
		return nil
	end
	local typ, count
	if eq ~= nil then
		count = count_of(eq)
		if count == nil or #f > 2 then
			return nil
		end
		typ = f[2]
	elseif #f == 1 then
		count = 1
	elseif #f == 2 then
		count = count_of(f[2])
		if count == nil then
			typ, count = f[2], 1 -- a type with an implicit count of 1
		end
	elseif #f == 3 then
		typ, count = f[2], count_of(f[3])
		if count == nil then
			return nil
		end
	else
		return nil
	end
	if typ == "" then
		typ = nil -- "gpu::1" is untyped to Slurm
	end
	return { name = name, type = typ, count = count }
end

-- A token the guard cannot read is refused for a tenant when it could be a
-- GPU request.
local function could_be_gpu(lower)
	return string.find(lower, "gpu", 1, true) or string.find(lower, "gres", 1, true) or
		string.find(lower, "shard", 1, true) or string.find(lower, "mps", 1, true)
end

-- gres returns the requests of one tres_per_* string as a list of
-- { name = "gpu", type = "h100" or nil, count = n, text = token } (names
-- lower-cased; entries with a count of 0 left out, as Slurm ignores them)
-- and the list of tokens it cannot read that could be GPU requests.
-- Slurm writes "gres/gpu:h100:2,gres/shard:1" and "gres/gpu=1"
-- (--gpus-per-task); the form without "gres/" ("gpu:1", which an update
-- passes through as given) is read as a GPU request too, and other TRES
-- ("cpu=2", "license/x=1") are left alone.
function M.gres(s)
	local out, unreadable = {}, {}
	if s == nil then
		return out, unreadable
	end
	for token in string.gmatch(s, "[^,]+") do
		local t = trim(token)
		if t ~= "" then
			local lower = string.lower(t)
			local rest
			if string.sub(lower, 1, 5) == "gres/" or string.sub(lower, 1, 5) == "gres:" then
				rest = string.sub(t, 6)
			elseif not string.find(t, "/", 1, true) then
				rest = t
			end
			local e = rest and entry(rest)
			if e ~= nil then
				if e.count > 0 then
					e.text = t
					out[#out + 1] = e
				end
			elseif could_be_gpu(lower) then
				unreadable[#unreadable + 1] = t
			end
		end
	end
	return out, unreadable
end

---------------------------------------------------------------------------
-- The job and the checks.
---------------------------------------------------------------------------

M.fields = { "tres_per_node", "tres_per_job", "tres_per_socket", "tres_per_task" }

-- submit_view is a new job as the checks see it.
function M.submit_view(d)
	local v = { account = d.account, qos = d.qos, partition = d.partition, user = d.user_name, tres = {} }
	if v.account == nil or v.account == "" then
		v.account = d.default_account
	end
	for i, k in ipairs(M.fields) do
		v.tres[i] = d[k]
	end
	return v
end

-- modify_view is a pending job as it will be after an update: each field
-- the update sets (job_desc) replaces the job record's (job_rec), as
-- slurmctld merges them; an empty string clears a tres_per_* field and an
-- empty account means the user's default account. touched reports whether
-- the update sets anything the checks look at; moved whether it changes
-- the account.
function M.modify_view(d, r)
	local v = { qos = r.qos, partition = r.partition, user = d.user_name or r.user_name, tres = {}, job_id = r.job_id }
	local touched = false
	local account = d.account
	if account == nil then
		account = r.account
	else
		touched = true
		if account == "" then
			account = d.default_account
		end
	end
	v.account = account
	if d.qos ~= nil then
		v.qos, touched = d.qos, true
	end
	if d.partition ~= nil then
		v.partition, touched = d.partition, true
	end
	for i, k in ipairs(M.fields) do
		local x = d[k]
		if x ~= nil then
			v.tres[i], touched = x, true
		else
			v.tres[i] = r[k]
		end
	end
	local old = r.account and string.lower(r.account) or nil
	local moved = account ~= nil and string.lower(account) ~= old
	return v, touched, moved
end

-- tenant_of returns the account (lower-cased, as Slurm stores it) and its
-- tenant, or nil when it is not a tenant or no table was ever loaded. A
-- sub-account's entry has state "sub" and names its tenant (of).
function M.tenant_of(account)
	if account == nil or account == "" then
		return nil
	end
	local tenants = M.tenants()
	if tenants == nil then
		return nil
	end
	account = string.lower(account)
	local t = tenants[account]
	if t == nil then
		return nil
	end
	return account, t
end

local function allowed(t)
	local names = {}
	for typ in pairs(t.types) do
		names[#names + 1] = typ
	end
	table.sort(names)
	local parts = {}
	for _, typ in ipairs(names) do
		parts[#parts + 1] = typ .. " (quota " .. string.format("%.0f", t.types[typ]) .. ")"
	end
	return names, table.concat(parts, ", ")
end

local function may_use(account, t)
	local names, list = allowed(t)
	if #names == 0 then
		return names, string.format("Tenant %s has no GPU quota.", account)
	end
	return names, string.format("Tenant %s may use: %s", account, list)
end

-- check_gpus returns why the job's GPU requests are refused, or nil.
function M.check_gpus(account, t, tres)
	local reqs = {}
	for i = 1, #M.fields do -- not ipairs: unset fields are nil holes
		local es, unreadable = M.gres(tres[i])
		if #unreadable > 0 then
			local _, uses = may_use(account, t)
			return string.format("cannot read the GPU request %q for tenant %s; write it as gres/gpu:TYPE:COUNT (e.g. --gres=gpu:TYPE:1). %s",
				unreadable[1], account, uses)
		end
		for _, e in ipairs(es) do
			reqs[#reqs + 1] = e
		end
	end
	for _, r in ipairs(reqs) do
		if r.name == "shard" or r.name == "mps" then
			local _, uses = may_use(account, t)
			return string.format("GPU sharing (gres/%s) refused for tenant %s: the tenant has no %s quota, and its typed GPU quota does not count shares. Request whole GPUs or MIG slices instead. %s",
				r.name, account, r.name, uses)
		end
	end
	for _, r in ipairs(reqs) do
		if r.name == "gpu" then
			local names, uses = may_use(account, t)
			if #names == 0 then
				return string.format("tenant %s has no GPU quota, so it may not request GPUs", account)
			end
			if r.type == nil then
				return string.format(
					"GPU request without a type refused for tenant %s: Slurm cannot hold untyped GPUs to the tenant's typed quota. " ..
					"Name a type, e.g. --gres=gpu:%s:%d. %s",
					account, names[1], r.count, uses)
			end
			if t.types[r.type] == nil then
				return string.format("GPU type %s is not in tenant %s's quota. %s", r.type, account, uses)
			end
		end
	end
	return nil
end

---------------------------------------------------------------------------
-- The on-demand tier and who may put jobs there.
---------------------------------------------------------------------------

-- ondemand_named returns what of the on-demand tier a QOS and a partition
-- list name ("QOS ondemand", "partition ondemand"), or nil. Names are
-- compared without case (Slurm stores QOS names lower-cased; a partition
-- name in another case is refused rather than guessed in the user's
-- favour).
function M.ondemand_named(qos, partition)
	if qos ~= nil and string.lower(trim(qos)) == string.lower(M.ondemand_qos) then
		return "QOS " .. M.ondemand_qos
	end
	if partition ~= nil then
		for p in string.gmatch(partition, "[^,]+") do
			if string.lower(trim(p)) == string.lower(M.ondemand_partition) then
				return "partition " .. M.ondemand_partition
			end
		end
	end
	return nil
end

-- read_uid returns the effective uid in a /proc/<pid>/status file, or nil.
function M.read_uid(path)
	local f = io.open(path, "r")
	if f == nil then
		return nil
	end
	local data = f:read(8192) or ""
	f:close()
	local _, eff = string.match(data, "\nUid:%s+(%d+)%s+(%d+)")
	if eff == nil then
		_, eff = string.match(data, "^Uid:%s+(%d+)%s+(%d+)")
	end
	return tonumber(eff)
end

-- slurm_uid returns SlurmUser's uid: slurmctld, which runs this script,
-- runs as SlurmUser. It is read once; nil when it cannot be read (then only
-- root is privileged).
function M.slurm_uid()
	if M.slurm_user_uid == nil then
		M.slurm_user_uid = M.read_uid(M.status_path) or false
		if M.slurm_user_uid == false then
			say("error", "cannot read SlurmUser's uid from " .. M.status_path .. "; only root may put tenants' jobs on the on-demand tier")
		end
	end
	return M.slurm_user_uid or nil
end

-- privileged reports whether uid is root or SlurmUser, whom Slurm treats as
-- root too (gpubridge's burst controller moves jobs with SlurmUser's token).
function M.privileged(uid)
	if uid == 0 then
		return true
	end
	local su = M.slurm_uid()
	return su ~= nil and uid == su
end

local function burst_hint(account)
	return string.format("gpubridge's burst controller moves tenant %s's jobs there when its quota holds them, within its burst cap and budget. " ..
		"Submit to the pool with the tenant's QOS (or none) and let it burst (docs/burst.md)", account)
end

-- check_ondemand_submit returns why a new job is refused for asking for the
-- on-demand tier, or nil.
function M.check_ondemand_submit(account, v)
	local named = M.ondemand_named(v.qos, v.partition)
	if named == nil then
		return nil
	end
	return string.format("tenant %s may not request the on-demand %s: %s.", account, named, burst_hint(account))
end

-- check_ondemand_modify returns why an update is refused for what it does
-- with the on-demand tier, or nil. d is what the update sets, v the job as
-- it will be.
function M.check_ondemand_modify(account, d, v, moved, job)
	local named = M.ondemand_named(d.qos, d.partition)
	if named ~= nil then
		return string.format("job %s: tenant %s may not request the on-demand %s: %s.", job, account, named, burst_hint(account))
	end
	if v.qos ~= nil and M.ondemand_named(v.qos, nil) ~= nil then
		local changes = {}
		if moved then
			changes[#changes + 1] = "account"
		end
		if d.partition ~= nil then
			changes[#changes + 1] = "partition"
		end
		for _, k in ipairs(M.fields) do
			if d[k] ~= nil then
				changes[#changes + 1] = "GPU request"
				break
			end
		end
		if #changes > 0 then
			return string.format("job %s is in the on-demand QOS %s, where only gpubridge's burst controller puts tenants' jobs, within each tenant's burst cap and budget; " ..
				"its %s may not change there (tenant %s). It may leave the on-demand tier: scontrol update jobid=%s qos=<the tenant's QOS> partition=<the pool>",
				job, M.ondemand_qos, table.concat(changes, " and "), account, job)
		end
	end
	if moved and M.ondemand_named(nil, v.partition) ~= nil then
		return string.format("job %s may run in the on-demand partition %s; it may not move into tenant %s's account: %s.",
			job, M.ondemand_partition, account, burst_hint(account))
	end
	return nil
end

-- refuse tells the user why (log_user), logs it in slurmctld.log and
-- returns Slurm's error code: an invalid GRES specification for GPU
-- requests, access denied otherwise.
local function refuse(msg, code, what)
	slurm.log_info("gpubridge guard: refused %s: %s", what, msg)
	slurm.log_user("%s", msg)
	return code
end

-- sub_refusal says why a job in a sub-account of a tenant is refused.
function M.sub_refusal(account, t)
	return string.format("gpubridge: account %s is under tenant %s's account; tenants have no sub-accounts (gpubridge removes it once its jobs end), " ..
		"and its jobs would escape the tenant's users and quota. Submit with -A %s", account, t.of, t.of)
end

-- guard_submit checks a new job.
function M.guard_submit(job_desc, submit_uid)
	local v = M.submit_view(job_desc)
	local account, t = M.tenant_of(v.account)
	if t == nil then
		return slurm.SUCCESS
	end
	local what = string.format("job of user %s in account %s", tostring(v.user), account)
	if t.state == "sub" then
		return refuse(M.sub_refusal(account, t), slurm.ESLURM_ACCESS_DENIED, what)
	end
	if t.state == "deleting" then
		return refuse(string.format("gpubridge: tenant %s is being deleted; new jobs are refused (running jobs continue)", account),
			slurm.ESLURM_ACCESS_DENIED, what)
	end
	if submit_uid ~= 0 and v.user ~= nil and not t.users[v.user] then
		return refuse(string.format("gpubridge: user %s is not a member of tenant %s", v.user, account), slurm.ESLURM_ACCESS_DENIED, what)
	end
	if not M.privileged(submit_uid) then
		local why = M.check_ondemand_submit(account, v)
		if why ~= nil then
			return refuse("gpubridge: " .. why, slurm.ESLURM_ACCESS_DENIED, what)
		end
	end
	local msg = M.check_gpus(account, t, v.tres)
	if msg ~= nil then
		return refuse("gpubridge: " .. msg, slurm.ESLURM_INVALID_GRES, what)
	end
	return slurm.SUCCESS
end

-- guard_modify checks an update of a job by a user other than root and
-- SlurmUser.
function M.guard_modify(job_desc, job_rec)
	local v, touched, moved = M.modify_view(job_desc, job_rec)
	if not touched then
		return slurm.SUCCESS
	end
	local account, t = M.tenant_of(v.account)
	if t == nil then
		return slurm.SUCCESS
	end
	local job = tostring(v.job_id)
	local what = string.format("update of job %s (user %s, account %s)", job, tostring(v.user), account)
	if t.state == "sub" then
		return refuse(string.format("job %s: %s", job, M.sub_refusal(account, t)), slurm.ESLURM_ACCESS_DENIED, what)
	end
	if moved and t.state == "deleting" then
		return refuse(string.format("gpubridge: job %s: tenant %s is being deleted; jobs may not move into it", job, account),
			slurm.ESLURM_ACCESS_DENIED, what)
	end
	if moved and v.user ~= nil and not t.users[v.user] then
		return refuse(string.format("gpubridge: job %s: user %s is not a member of tenant %s", job, v.user, account),
			slurm.ESLURM_ACCESS_DENIED, what)
	end
	local why = M.check_ondemand_modify(account, job_desc, v, moved, job)
	if why ~= nil then
		return refuse("gpubridge: " .. why, slurm.ESLURM_ACCESS_DENIED, what)
	end
	local msg = M.check_gpus(account, t, v.tres)
	if msg ~= nil then
		return refuse(string.format("gpubridge: job %s: %s", job, msg), slurm.ESLURM_INVALID_GRES, what)
	end
	return slurm.SUCCESS
end

---------------------------------------------------------------------------
-- Bookings (docs/bookings.md). A tenant's booking is a Slurm reservation
-- named <prefix><booking id> whose account is the tenant's. Slurm counts a
-- job inside a reservation against its QOS like any other, so a tenant's
-- job that names only its own bookings is switched from the tenant QOS to
-- the tenant's reservation QOS (REQUIRED_RESERVATION, no limits): it runs
-- on the booked GPUs while the quota is full, and a job outside a
-- reservation cannot use that QOS (Slurm refuses it, error 2066). A job
-- naming another tenant's booking is not switched (Slurm refuses it:
-- its account is not in the reservation), nor is one naming a reservation
-- that is not a gpubridge booking; asking for the reservation QOS by hand
-- there is refused, since it would escape the quota.
---------------------------------------------------------------------------

-- reservations returns the names in a --reservation list, or nil.
function M.reservations(s)
	if s == nil then
		return nil
	end
	local out = {}
	for r in string.gmatch(s, "[^,]+") do
		r = trim(r)
		if r ~= "" then
			out[#out + 1] = r
		end
	end
	if #out == 0 then
		return nil
	end
	return out
end

-- resv_accounts returns the accounts of reservation name as a set (lower
-- case) from slurmctld's reservation table (slurm.reservations), false
-- when slurmctld has no such reservation, or nil when the table is not
-- visible to the script (then Slurm's own check of the job's account
-- against the reservation decides). A reservation that excludes accounts
-- (-acct) lists none.
function M.resv_accounts(name)
	local rs = slurm.reservations
	if type(rs) ~= "table" then
		return nil
	end
	local r = rs[name]
	if r == nil then
		return false
	end
	local set = {}
	local list = r.accounts
	if type(list) == "string" then
		for a in string.gmatch(list, "[^,]+") do
			a = trim(a)
			if string.sub(a, 1, 1) == "-" then
				return {}
			end
			set[string.lower(a)] = true
		end
	end
	return set
end

-- is_booking reports whether reservation name is one of account's
-- bookings: b.prefix followed by a booking id, listing the account.
function M.is_booking(name, account, b)
	if string.sub(name, 1, #b.prefix) ~= b.prefix or not string.find(string.sub(name, #b.prefix + 1), "^[1-9]%d*$") then
		return false
	end
	local accts = M.resv_accounts(name)
	if accts == nil then
		return true
	end
	return accts ~= false and accts[account] == true
end

-- all_bookings reports whether every reservation of list is one of
-- account's bookings, and the first that is not.
local function all_bookings(list, account, b)
	for _, r in ipairs(list) do
		if not M.is_booking(r, account, b) then
			return false, r
		end
	end
	return true, nil
end

local function same_qos(a, b)
	return a ~= nil and b ~= nil and string.lower(trim(a)) == string.lower(b)
end

local function resv_qos_refusal(account, b, why)
	return string.format("gpubridge: QOS %s is for jobs inside tenant %s's bookings (reservations %s<id>, `gpubridge show bookings tenant=%s`); %s. Name the booking with --reservation and leave --qos out",
		b.resv_qos, account, b.prefix, account, why)
end

-- route_booking_submit switches a new job of a tenant that names only its
-- own bookings to the tenant's reservation QOS (when it asks for the
-- tenant QOS or none), and refuses a job that asks for the reservation QOS
-- outside them. It returns Slurm's code and whether it switched the job.
function M.route_booking_submit(job_desc, submit_uid)
	local v = M.submit_view(job_desc)
	local account, t = M.tenant_of(v.account)
	if t == nil or t.bookings == nil then
		return slurm.SUCCESS, false
	end
	local b = t.bookings
	local list = M.reservations(job_desc.reservation)
	local asked = same_qos(v.qos, b.resv_qos)
	if list == nil then
		return slurm.SUCCESS, false -- Slurm refuses the reservation QOS without a reservation (2066)
	end
	local mine, other = all_bookings(list, account, b)
	if not mine then
		if asked and not M.privileged(submit_uid) then
			return refuse(resv_qos_refusal(account, b, string.format("reservation %s is not one of them", other)),
				slurm.ESLURM_ACCESS_DENIED, string.format("job of user %s in account %s", tostring(v.user), account)), false
		end
		return slurm.SUCCESS, false
	end
	if asked then
		return slurm.SUCCESS, true
	end
	if v.qos ~= nil and trim(v.qos) ~= "" and not same_qos(v.qos, b.qos) then
		return slurm.SUCCESS, false -- another QOS the user chose: left to Slurm and the checks
	end
	job_desc.qos = b.resv_qos
	slurm.log_info("gpubridge guard: job of user %s in account %s names booking(s) %s: QOS %s -> %s",
		tostring(v.user), account, table.concat(list, ","), b.qos, b.resv_qos)
	return slurm.SUCCESS, true
end

-- route_booking_modify does the same for an update of a pending job: one
-- that sets its reservations to the tenant's own bookings is switched to
-- the reservation QOS; one that clears the reservation of a job in the
-- reservation QOS is switched back to the tenant QOS; one that asks for
-- the reservation QOS with a reservation that is not a booking of the
-- tenant is refused (root and SlurmUser may).
function M.route_booking_modify(job_desc, job_rec, modify_uid)
	local v = M.modify_view(job_desc, job_rec)
	local account, t = M.tenant_of(v.account)
	if t == nil or t.bookings == nil then
		return slurm.SUCCESS
	end
	local b = t.bookings
	local resv = job_desc.reservation
	if resv == nil then
		resv = job_rec.resv_name -- nil where slurmctld does not show it
	end
	local list = M.reservations(resv)
	local what = string.format("update of job %s (user %s, account %s)", tostring(v.job_id), tostring(v.user), account)
	if list == nil then
		if job_desc.reservation ~= nil and job_desc.qos == nil and same_qos(v.qos, b.resv_qos) then
			job_desc.qos = b.qos
			slurm.log_info("gpubridge guard: %s leaves its booking: QOS %s -> %s", what, b.resv_qos, b.qos)
		end
		return slurm.SUCCESS
	end
	local mine, other = all_bookings(list, account, b)
	if not mine then
		if same_qos(job_desc.qos, b.resv_qos) and not M.privileged(modify_uid) then
			return refuse(resv_qos_refusal(account, b, string.format("reservation %s is not one of them", other)), slurm.ESLURM_ACCESS_DENIED, what)
		end
		if job_desc.reservation ~= nil and job_desc.qos == nil and same_qos(v.qos, b.resv_qos) then
			job_desc.qos = b.qos -- moved out of its bookings
			slurm.log_info("gpubridge guard: %s leaves its booking: QOS %s -> %s", what, b.resv_qos, b.qos)
		end
		return slurm.SUCCESS
	end
	if job_desc.reservation ~= nil and (v.qos == nil or trim(v.qos) == "" or same_qos(v.qos, b.qos)) then
		job_desc.qos = b.resv_qos
		slurm.log_info("gpubridge guard: %s names booking(s) %s: QOS %s -> %s", what, table.concat(list, ","), b.qos, b.resv_qos)
	end
	return slurm.SUCCESS
end

---------------------------------------------------------------------------
-- Slurm's hooks. Routing happens only for jobs the guard accepted: first
-- the bookings' route above; then, for a job it did not put in a booking,
-- the optional submit-time burst routing (contrib/job_submit_burst.lua,
-- see docs/burst.md), loaded when installed beside this script, which
-- routes only accounts listed in its own configuration file.
---------------------------------------------------------------------------

pcall(dofile, "/etc/slurm/job_submit_burst.lua")

function M.route_submit(job_desc, part_list, submit_uid)
	local rc, booked = M.route_booking_submit(job_desc, submit_uid)
	if rc ~= slurm.SUCCESS then
		return rc
	end
	if not booked and gpubridge_burst_route then
		gpubridge_burst_route(job_desc, part_list, submit_uid)
	end
	return slurm.SUCCESS
end

-- job_submit and job_modify are the whole of gpubridge's hooks: a site's
-- own job_submit.lua that includes this file calls them at the end of its
-- slurm_job_submit and slurm_job_modify (docs/install.md).
function M.job_submit(job_desc, part_list, submit_uid)
	local rc = M.guard_submit(job_desc, submit_uid)
	if rc == slurm.SUCCESS then
		rc = M.route_submit(job_desc, part_list, submit_uid)
	end
	return rc
end

function M.job_modify(job_desc, job_rec, part_list, modify_uid)
	local rc = slurm.SUCCESS
	if not M.privileged(modify_uid) then -- root, SlurmUser and gpubridge's controllers skip the checks
		rc = M.guard_modify(job_desc, job_rec)
	end
	if rc == slurm.SUCCESS then
		rc = M.route_booking_modify(job_desc, job_rec, modify_uid)
	end
	return rc
end

slurm_job_submit = M.job_submit
slurm_job_modify = M.job_modify

slurm.log_info("gpubridge guard loaded; tenants from %s", M.path)
return slurm.SUCCESS
