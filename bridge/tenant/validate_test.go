package tenant

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/money"
)

var testRules = Rules{
	GPUTypes: []string{"h100", "1g.10gb", "3g.40gb"},
	Naming:   Naming{OnDemandQOS: "ondemand"},
}

func TestCheckName(t *testing.T) {
	cases := map[string]struct {
		name string
		want string // substring of the message; "" = valid
	}{
		"plain":              {name: "acme", want: ""},
		"digits and dashes":  {name: "team-7_b", want: ""},
		"semicolon":          {name: "a;b", want: `bad character ';'`},
		"command sub":        {name: "$(id)", want: `bad character '$'`},
		"quote":              {name: "a'b", want: `bad character "'"`},
		"space":              {name: "a b", want: `bad character ' '`},
		"300 chars":          {name: strings.Repeat("a", 300), want: "is 300 characters long; at most 32"},
		"upper case":         {name: "TeamA", want: `Slurm lower-cases account names, so write "teama"`},
		"leading digit":      {name: "7up", want: `bad character '7'`},
		"empty":              {name: "", want: "is empty"},
		"root":               {name: "root", want: "reserved"},
		"unicode":            {name: "café", want: "bad character"},
		"newline":            {name: "a\nb", want: "bad character"},
		"max length allowed": {name: strings.Repeat("a", MaxNameLen), want: ""},
		"keyword set":        {name: "set", want: "is a keyword of gpubridge's commands"},
		"keyword where":      {name: "where", want: "is a keyword of gpubridge's commands"},
		"keyword Set":        {name: "Set", want: "bad character 'S'"},
		"keyword none":       {name: "none", want: "choose another name"},
		"settings is a name": {name: "settings", want: ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := CheckName(c.name)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("CheckName(%q) = %q, want %q", c.name, got, c.want)
			}
		})
	}
}

func TestFromArgsAndValidate(t *testing.T) {
	cases := map[string]struct {
		name string
		args map[string]string
		want Problems
	}{
		"valid": {
			name: "acme",
			args: map[string]string{"gpus": "h100:16,1g.10gb:14", "users": "alice,bob", "admins": "alice", "description": "Acme ML"},
		},
		"equals separator": {name: "acme", args: map[string]string{"gpus": "h100=16"}},
		"negative quota": {
			name: "acme", args: map[string]string{"gpus": "h100:-1"},
			want: Problems{{Field: "gpus.h100", Msg: "-1 is negative; give 0 or more (in Slurm -1 would silently clear the limit)"}},
		},
		"not a number": {
			name: "acme", args: map[string]string{"gpus": "h100:abc"},
			want: Problems{{Field: "gpus.h100", Msg: `"abc" is not a whole number; give digits only, such as 4`}},
		},
		"overflow": {
			name: "acme", args: map[string]string{"gpus": "h100:99999999999999999999999"},
			want: Problems{{Field: "gpus.h100", Msg: "99999999999999999999999 is too large; at most 1000000"}},
		},
		"unknown type": {
			name: "acme", args: map[string]string{"gpus": "a100:4"},
			want: Problems{{Field: "gpus.a100", Msg: `unknown GPU type "a100"; the cluster tracks: 1g.10gb, 3g.40gb, h100`}},
		},
		"type case": {
			name: "acme", args: map[string]string{"gpus": "H100:4"},
			want: Problems{{Field: "gpus.H100", Msg: `unknown GPU type "H100"; did you mean "h100"?`}},
		},
		"missing count": {
			name: "acme", args: map[string]string{"gpus": "h100"},
			want: Problems{{Field: "gpus", Msg: `"h100" has no count; write TYPE:COUNT such as h100:16`}},
		},
		"every problem at once": {
			name: "a;b", args: map[string]string{"gpus": "h100:-1,1g.10gb:x", "users": "alice,b$b", "admins": "carol", "cpus": "many"},
			want: Problems{
				{Field: "cpus", Msg: `"many" is not a whole number; give digits only, such as 4`},
				{Field: "gpus.1g.10gb", Msg: `"x" is not a whole number; give digits only, such as 4`},
				{Field: "gpus.h100", Msg: "-1 is negative; give 0 or more (in Slurm -1 would silently clear the limit)"},
				{Field: "name", Msg: `"a;b" is not a valid name: use lower-case letters, digits, '-' and '_', starting with a letter (bad character ';')`},
				{Field: "users[1]", Msg: `"b$b" is not a valid user name: use lower-case letters, digits, '-', '.' and '_', starting with a letter or '_' (bad character '$')`},
				{Field: "admins[0]", Msg: `"carol" is not one of the tenant's users; add carol to users too`},
			},
		},
		"unknown option": {
			name: "acme", args: map[string]string{"quota": "1"},
			want: Problems{{Field: "quota", Msg: "is not a tenant option; known options: " + strings.Join(ArgKeys, ", ")}},
		},
		"bad description": {
			name: "acme", args: map[string]string{"description": "it's"},
			want: Problems{{Field: "description", Msg: `contains "'"; quotes and backslashes are not allowed (Slurm stores the text unescaped)`}},
		},
		"cost centre": {name: "acme", args: map[string]string{"costcenter": "CC-4711 / Research"}},
		"bad cost centre": {
			name: "acme", args: map[string]string{"costcenter": " CC\t4711"},
			want: Problems{{Field: "costCenter", Msg: "has leading or trailing spaces"}},
		},
		"cost centre quote": {
			name: "acme", args: map[string]string{"costcenter": `CC"1`},
			want: Problems{{Field: "costCenter", Msg: `contains '"'; quotes and backslashes are not allowed (Slurm stores the text unescaped)`}},
		},
		"long cost centre": {
			name: "acme", args: map[string]string{"costcenter": strings.Repeat("c", 65)},
			want: Problems{{Field: "costCenter", Msg: "is 65 characters long; at most 64"}},
		},
		"memory and burst": {
			name: "acme", args: map[string]string{"memory": "512G", "burst": "yes", "burstmaxgpus": "4", "burstbudget": "2500.50"},
		},
		"bad burst": {
			name: "acme", args: map[string]string{"burst": "maybe", "burstbudget": "1.2345678"},
			want: Problems{
				{Field: "burst", Msg: `"maybe" is not yes or no`},
				{Field: "burst.monthlyBudget", Msg: `"1.2345678" is not an amount such as 2500.00 (digits, at most 6 decimals)`},
			},
		},
		"on-demand QOS name": {
			name: "ondemand",
			want: Problems{{Field: "name", Msg: `the QOS name "ondemand" is the shared on-demand QOS; choose another name`}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tn, ps := FromArgs(c.name, c.args)
			ps = append(ps, Validate(tn, testRules)...)
			sortProblems(ps)
			want := append(Problems(nil), c.want...)
			sortProblems(want)
			if diff := cmp.Diff(want, ps); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if len(ps) > 0 && !errors.Is(ps.Err(), ErrInvalid) {
				t.Error("Problems does not match ErrInvalid")
			}
		})
	}
}

func sortProblems(ps Problems) {
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			if ps[j].Field < ps[i].Field {
				ps[i], ps[j] = ps[j], ps[i]
			}
		}
	}
}

func TestFromArgsValues(t *testing.T) {
	tn, ps := FromArgs("acme", map[string]string{
		"gpus": "h100:16, 1g.10gb:14", "users": "bob,alice", "admins": "alice", "cpus": "64", "mem": "1T",
		"burst": "on", "burstmaxgpus": "8", "burstbudget": "2500.5", "organization": "acme-corp", "costcenter": "CC-4711",
	})
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	tn.Normalize()
	cpus, mem, budget := int64(64), Megabyte(1024*1024), money.MustParse("2500.50")
	want := Tenant{
		Name: "acme", Organization: "acme-corp", CostCenter: "CC-4711", Users: []string{"alice", "bob"}, Admins: []string{"alice"},
		GPUs: Quota{"h100": 16, "1g.10gb": 14}, CPUs: &cpus, Memory: &mem,
		Burst: Burst{Enabled: true, MaxOnDemandGPUs: 8, MonthlyBudget: &budget}, State: Active,
	}
	if diff := cmp.Diff(want, tn); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := tn.Memory.String(); got != "1T" {
		t.Errorf("memory String = %q", got)
	}
	if got := budget.String(); got != "2500.50" {
		t.Errorf("budget String = %q", got)
	}
}

func TestUpdate(t *testing.T) {
	cpus := int64(8)
	base := Tenant{Name: "acme", Users: []string{"alice", "bob"}, Admins: []string{"alice"}, GPUs: Quota{"h100": 16, "1g.10gb": 14}, CPUs: &cpus, State: Active}
	cases := map[string]struct {
		set  map[string]string
		want func(*Tenant)
	}{
		"merge one type":  {set: map[string]string{"gpus": "h100:24"}, want: func(t *Tenant) { t.GPUs = Quota{"h100": 24, "1g.10gb": 14} }},
		"drop a type":     {set: map[string]string{"gpus": "1g.10gb:none"}, want: func(t *Tenant) { t.GPUs = Quota{"h100": 16} }},
		"drop every type": {set: map[string]string{"gpus": "1g.10gb:none,h100:none"}, want: func(t *Tenant) { t.GPUs = nil }},
		"replace users":   {set: map[string]string{"users": "alice,carol"}, want: func(t *Tenant) { t.Users = []string{"alice", "carol"} }},
		"clear cpus":      {set: map[string]string{"cpus": "none"}, want: func(t *Tenant) { t.CPUs = nil }},
		"description":     {set: map[string]string{"description": "new"}, want: func(t *Tenant) { t.Description = "new" }},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, ps := Update(base, c.set)
			if len(ps) > 0 {
				t.Fatal(ps)
			}
			got.Normalize()
			want := base.Clone()
			c.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if base.GPUs["h100"] != 16 {
		t.Error("Update modified its input")
	}
}

func TestValidateSetCollisions(t *testing.T) {
	cases := map[string]struct {
		ts       []Tenant
		existing []string
		want     Problems
	}{
		"case collision in set": {
			ts: []Tenant{{Name: "teama"}, {Name: "TeamA"}},
			want: Problems{
				{Field: "tenants[1] (TeamA).name", Msg: `"TeamA" has upper-case letters; Slurm lower-cases account names, so write "teama"`},
				{Field: "tenants[1] (TeamA).name", Msg: `"TeamA" collides with "teama" (tenants[0]): Slurm lower-cases account names`},
			},
		},
		"case collision with store": {
			ts:       []Tenant{{Name: "TeamA"}},
			existing: []string{"teama"},
			want: Problems{
				{Field: "tenants[0] (TeamA).name", Msg: `"TeamA" has upper-case letters; Slurm lower-cases account names, so write "teama"`},
				{Field: "tenants[0] (TeamA).name", Msg: `"TeamA" collides with the existing tenant "teama": Slurm lower-cases account names`},
			},
		},
		"duplicate": {
			ts:   []Tenant{{Name: "acme"}, {Name: "acme"}},
			want: Problems{{Field: "tenants[1] (acme).name", Msg: `"acme" is given twice (also tenants[0])`}},
		},
		"replacing an existing tenant is fine": {ts: []Tenant{{Name: "acme"}}, existing: []string{"acme"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := ValidateSet(c.ts, c.existing, testRules, true)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMemoryAndMoney(t *testing.T) {
	mem := map[string]struct {
		in   string
		want Megabyte
		bad  bool
	}{
		"bare MB": {in: "2048", want: 2048},
		"M":       {in: "1500M", want: 1500},
		"G":       {in: "512G", want: 512 * 1024},
		"T":       {in: "1t", want: 1024 * 1024},
		"neg":     {in: "-1G", bad: true},
		"frac":    {in: "1.5G", bad: true},
		"huge":    {in: "99999999999T", bad: true},
	}
	for name, c := range mem {
		t.Run("memory/"+name, func(t *testing.T) {
			got, msg := ParseMemory(c.in)
			if (msg != "") != c.bad || got != c.want {
				t.Errorf("ParseMemory(%q) = %d, %q", c.in, got, msg)
			}
		})
	}
	amounts := map[string]struct {
		in   string
		want money.Amount
		bad  bool
	}{
		"whole":      {in: "2500", want: money.MustParse("2500.00")},
		"one dec":    {in: "2500.5", want: money.MustParse("2500.50")},
		"two dec":    {in: "0.07", want: money.MustParse("0.07")},
		"three dec":  {in: "1.005", want: money.MustParse("1.005")}, // a KWD budget; a JPY card refuses it
		"seven dec":  {in: "1.0000005", bad: true},
		"too large":  {in: "1000000000.01", bad: true},
		"negative":   {in: "-5", bad: true},
		"trailing .": {in: "5.", bad: true},
		"letters":    {in: "5.x0", bad: true},
	}
	for name, c := range amounts {
		t.Run("money/"+name, func(t *testing.T) {
			got, msg := ParseMoney(c.in)
			if (msg != "") != c.bad || got != c.want {
				t.Errorf("ParseMoney(%q) = %s, %q", c.in, got, msg)
			}
		})
	}
}

func TestCheckUserKeywords(t *testing.T) {
	for _, k := range Keywords {
		if msg := CheckUser(k); !strings.Contains(msg, "is a keyword of gpubridge's commands") {
			t.Errorf("CheckUser(%q) = %q; want the keyword refusal", k, msg)
		}
	}
	if msg := CheckUser("setup"); msg != "" {
		t.Errorf("CheckUser(setup) = %q", msg)
	}
}

// TestUpdateCostCenter: modify tenant set costcenter= sets it, =none
// clears it.
func TestUpdateCostCenter(t *testing.T) {
	tn := Tenant{Name: "acme", State: Active}
	set, ps := Update(tn, map[string]string{"costcenter": "CC-4711"})
	if len(ps) > 0 || set.CostCenter != "CC-4711" {
		t.Fatalf("set: %q %v", set.CostCenter, ps)
	}
	cleared, ps := Update(set, map[string]string{"costcenter": "none"})
	if len(ps) > 0 || cleared.CostCenter != "" {
		t.Fatalf("none: %q %v", cleared.CostCenter, ps)
	}
	if f := Fields(set); f[3].Key != "costcenter" || f[3].Value != "CC-4711" {
		t.Errorf("show tenant field %+v, want costcenter CC-4711 after organization", f[3])
	}
}
