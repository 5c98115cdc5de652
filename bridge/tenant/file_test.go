package tenant

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/money"
)

func TestParseFile(t *testing.T) {
	cases := map[string]struct {
		yaml string
		want Problems
		n    int // tenants parsed when valid
	}{
		"valid": {
			yaml: `
version: 1
tenants:
  - name: acme
    description: Acme ML research
    users: [alice, bob]
    admins: [alice]
    gpus: {h100: 16, 1g.10gb: 14}
    cpus: 256
    memory: 1T
    burst: {enabled: true, maxOnDemandGPUs: 8, monthlyBudget: "2500.00"}
  - name: globex
    users: carol,dave
    gpus: "h100:2"
delete: [oldteam]
`, n: 2,
		},
		"one bad tenant among valid ones": {
			yaml: `
tenants:
  - name: acme
    gpus: {h100: 2}
  - name: a;b
    gpus: {h100: -1, a100: 3, 1g.10gb: abc}
  - name: globex
    gpus: {h100: 1}
`,
			want: Problems{
				{Field: "tenants[1] (a;b).gpus.1g.10gb", Msg: `"abc" is not a whole number; give digits only, such as 4`},
				{Field: "tenants[1] (a;b).gpus.h100", Msg: "-1 is negative; give 0 or more (in Slurm -1 would silently clear the limit)"},
				{Field: "tenants[1] (a;b).name", Msg: `"a;b" is not a valid name: use lower-case letters, digits, '-' and '_', starting with a letter (bad character ';')`},
				{Field: "tenants[1] (a;b).gpus.a100", Msg: `unknown GPU type "a100"; the cluster tracks: 1g.10gb, 3g.40gb, h100`},
			},
		},
		"case collision inside the file": {
			yaml: "tenants:\n  - name: teama\n  - name: TeamA\n",
			want: Problems{
				{Field: "tenants[1] (TeamA).name", Msg: `"TeamA" has upper-case letters; Slurm lower-cases account names, so write "teama"`},
				{Field: "tenants[1] (TeamA).name", Msg: `"TeamA" collides with "teama" (tenants[0]): Slurm lower-cases account names`},
			},
		},
		"unknown keys": {
			yaml: "tenant:\n  - name: x\ntenants:\n  - name: acme\n    gpu: {h100: 1}\n",
			want: Problems{
				{Field: "tenant", Msg: "is not a file key; known keys: version, tenants, delete, purge"},
				{Field: "tenants[0] (acme).gpu", Msg: "is not a tenant field; known fields: name, description, organization, costCenter, users, admins, gpus, cpus, memory, burst, bookings, adopted, origin"},
			},
		},
		"not YAML": {
			yaml: "tenants: [\n",
			want: Problems{{Field: "file", Msg: "is not valid YAML: yaml: line 1: did not find expected node content"}},
		},
		"duplicate key": {
			yaml: "tenants:\n  - name: acme\n    name: other\n",
			want: Problems{{Field: "file", Msg: `is not valid YAML: yaml: unmarshal errors:
  line 3: key "name" already set in map`}},
		},
		"missing name": {
			yaml: "tenants:\n  - gpus: {h100: 1}\n",
			want: Problems{{Field: "tenants[0].name", Msg: "is empty; give a name such as acme"}},
		},
		"float quota": {
			yaml: "tenants:\n  - name: acme\n    gpus: {h100: 1.5}\n",
			want: Problems{{Field: "tenants[0] (acme).gpus.h100", Msg: `"1.5" is not a whole number; give digits only, such as 4`}},
		},
		"none in file": {
			yaml: "tenants:\n  - name: acme\n    gpus: h100:none\n",
			want: Problems{{Field: "tenants[0] (acme).gpus.h100", Msg: "none is only for `modify tenant`; leave the type out instead"}},
		},
		"empty": {
			yaml: "version: 1\n",
			want: Problems{{Field: "tenants", Msg: "the file declares no tenants and deletes none"}},
		},
		"wrong version": {
			yaml: "version: 2\ntenants:\n  - name: acme\n",
			want: Problems{{Field: "version", Msg: "must be 1"}},
		},
		"delete and declare": {
			yaml: "tenants:\n  - name: acme\ndelete: [acme]\n",
			want: Problems{{Field: "delete[0]", Msg: `"acme" is also listed under tenants; give it in one place`}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f, ps := ParseFile([]byte(c.yaml), nil, testRules)
			got := append(Problems(nil), ps...)
			sortProblems(got)
			want := append(Problems(nil), c.want...)
			sortProblems(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if len(c.want) == 0 && len(f.Tenants) != c.n {
				t.Errorf("parsed %d tenants, want %d", len(f.Tenants), c.n)
			}
		})
	}
}

// TestFileRoundTrip: what Marshal writes, ParseFile reads back unchanged.
func TestFileRoundTrip(t *testing.T) {
	cpus, mem, budget := int64(64), Megabyte(512*1024), money.MustParse("1234.56")
	in := File{Tenants: []Tenant{
		{Name: "acme", Description: "Acme ML", Organization: "acme-corp", CostCenter: "CC-4711", Users: []string{"alice", "bob"}, Admins: []string{"alice"},
			GPUs: Quota{"h100": 16, "1g.10gb": 14}, CPUs: &cpus, Memory: &mem,
			Burst: Burst{Enabled: true, MaxOnDemandGPUs: 8, MonthlyBudget: &budget}, State: Active},
		{Name: "globex", Users: []string{"carol"}, State: Active},
	}, Delete: []string{"old"}}
	b, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out, ps := ParseFile(b, nil, testRules)
	if len(ps) > 0 {
		t.Fatalf("%v\n%s", ps, b)
	}
	in.Version = FileVersion
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-want +got):\n%s\nfile:\n%s", diff, b)
	}
}

// TestParseFileRefusesWhatYAMLChanges: values that YAML reads as something
// else than what was written (booleans for names, floats and octal for
// counts, rounded unquoted amounts) are refused, each naming its field;
// quoted, the same values are what they say.
func TestParseFileRefusesWhatYAMLChanges(t *testing.T) {
	cases := map[string]struct {
		yaml string
		want Problems
	}{
		"boolean name and users": {
			yaml: "tenants:\n  - name: yes\n    users: [alice, on]\n    admins: [alice]\n",
			want: Problems{
				{Field: "tenants[0] (yes).name", Msg: `yes is read by YAML as the boolean true, not as text; write it in quotes: "yes"`},
				{Field: "tenants[0] (yes).users[1]", Msg: `on is read by YAML as the boolean true, not as text; write it in quotes: "on"`},
			},
		},
		"boolean in delete": {
			yaml: "delete: [n]\n",
			want: Problems{{Field: "delete[0]", Msg: `n is read by YAML as the boolean false, not as text; write it in quotes: "n"`}},
		},
		"boolean description": {
			yaml: "tenants:\n  - name: acme\n    description: no\n",
			want: Problems{{Field: "tenants[0] (acme).description", Msg: `no is read by YAML as the boolean false, not as text; write it in quotes: "no"`}},
		},
		"decimal and octal counts": {
			yaml: "tenants:\n  - name: acme\n    gpus: {h100: 16.0, 1g.10gb: 010}\n    cpus: 0x10\n    memory: 2.0\n    burst: {maxOnDemandGPUs: 1_000}\n",
			want: Problems{
				{Field: "tenants[0] (acme).gpus.h100", Msg: "16.0 is a decimal number; give a whole number without a decimal point, such as 16"},
				{Field: "tenants[0] (acme).gpus.1g.10gb", Msg: "010 is read by YAML as the number 8 (octal, hexadecimal or with '_'); write plain decimal digits"},
				{Field: "tenants[0] (acme).cpus", Msg: "0x10 is read by YAML as the number 16 (octal, hexadecimal or with '_'); write plain decimal digits"},
				{Field: "tenants[0] (acme).memory", Msg: "2.0 is a decimal number; give a whole number without a decimal point, such as 2"},
				{Field: "tenants[0] (acme).burst.maxOnDemandGPUs", Msg: "1_000 is read by YAML as the number 1000 (octal, hexadecimal or with '_'); write plain decimal digits"},
			},
		},
		"boolean count": {
			yaml: "tenants:\n  - name: acme\n    gpus: {h100: yes}\n",
			want: Problems{{Field: "tenants[0] (acme).gpus.h100", Msg: "yes is read by YAML as a boolean; give a whole number such as 4"}},
		},
		"long unquoted amount": {
			yaml: "tenants:\n  - name: acme\n    burst: {monthlyBudget: 0.10000000000000000555}\n",
			want: Problems{{Field: "tenants[0] (acme).burst.monthlyBudget", Msg: `"0.10000000000000000555" is not an amount such as 2500.00 (digits, at most 6 decimals)`}},
		},
		"keyword names": {
			yaml: "tenants:\n  - name: set\n    users: [where]\n",
			want: Problems{
				{Field: "tenants[0] (set).name", Msg: "\"set\" is a keyword of gpubridge's commands (as in `modify tenant NAME set key=value`); choose another name"},
				{Field: "tenants[0] (set).users[0]", Msg: "\"where\" is a keyword of gpubridge's commands (as in `modify tenant NAME set key=value`); choose another name"},
			},
		},
		"quoted, the same values are fine": {
			yaml: "tenants:\n  - name: \"yes\"\n    users: [alice, \"on\"]\n    description: \"no\"\n    gpus: {h100: \"16\", 1g.10gb: 8}\n    cpus: 16\n    burst: {monthlyBudget: \"1234567.89\", maxOnDemandGPUs: 1000}\n",
		},
		"short unquoted amounts are exact": {
			yaml: "tenants:\n  - name: acme\n    burst: {monthlyBudget: 2500.50}\n  - name: globex\n    burst: {monthlyBudget: 2500}\n",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f, ps := ParseFile([]byte(c.yaml), nil, testRules)
			got := append(Problems(nil), ps...)
			sortProblems(got)
			want := append(Problems(nil), c.want...)
			sortProblems(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if len(c.want) == 0 && len(f.Tenants) == 0 {
				t.Error("no tenants parsed")
			}
		})
	}
}

func TestParseFileSizeLimit(t *testing.T) {
	b := []byte("tenants:\n  - name: acme\n    description: \"" + strings.Repeat("x", MaxFileBytes) + "\"\n")
	_, ps := ParseFile(b, nil, testRules)
	if len(ps) != 1 || ps[0].Field != "file" || !strings.Contains(ps[0].Msg, "at most 4194304 (4 MiB): split it") {
		t.Errorf("problems = %v", ps)
	}
}
