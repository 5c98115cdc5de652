package slurmstr

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTRES(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []TRES
		wantErr string
	}{
		"node CfgTRES": {in: "cpu=8,mem=16000M,billing=8,gres/gpu=4,gres/gpu:h100=4,mem=2G", want: []TRES{
			{Type: "cpu", Count: 8}, {Type: "mem", Count: 16000}, {Type: "billing", Count: 8},
			{Type: "gres", Name: "gpu", Count: 4}, {Type: "gres", Name: "gpu:h100", Count: 4}, {Type: "mem", Count: 2048}}},
		"empty":                {in: "", want: nil},
		"null":                 {in: "(null)", want: nil},
		"mem without unit":     {in: "mem=2048", want: []TRES{{Type: "mem", Count: 2048}}},
		"mem in K, whole MB":   {in: "mem=2048K", want: []TRES{{Type: "mem", Count: 2}}},
		"mem in T":             {in: "mem=1T", want: []TRES{{Type: "mem", Count: 1 << 20}}},
		"gpumem is megabytes":  {in: "gres/gpumem=80G", want: []TRES{{Type: "gres", Name: "gpumem", Count: 80 << 10}}},
		"burst buffer":         {in: "bb/datawarp=1G", want: []TRES{{Type: "bb", Name: "datawarp", Count: 1024}}},
		"fs/disk is ones":      {in: "fs/disk=10G", want: []TRES{{Type: "fs", Name: "disk", Count: 10 << 30}}},
		"license":              {in: "license/matlab@db=2", want: []TRES{{Type: "license", Name: "matlab@db", Count: 2}}},
		"NONE is infinite":     {in: "gres/gpu:h100=NONE", want: []TRES{{Type: "gres", Name: "gpu:h100", Count: Infinite}}},
		"leading comma":        {in: ",cpu=1", want: []TRES{{Type: "cpu", Count: 1}}},
		"spaces around":        {in: " cpu=1 , gres/gpu:h100=1 ", want: []TRES{{Type: "cpu", Count: 1}, {Type: "gres", Name: "gpu:h100", Count: 1}}},
		"repeat kept":          {in: "cpu=1,cpu=2", want: []TRES{{Type: "cpu", Count: 1}, {Type: "cpu", Count: 2}}},
		"no count":             {in: "cpu", wantErr: "want TYPE[/NAME]=COUNT"},
		"mem below a megabyte": {in: "mem=512K", wantErr: "not a whole number of the unit Slurm keeps it in (megabytes)"},
		"fraction":             {in: "mem=1.5G", wantErr: "has a fraction"},
		"lower-case unit":      {in: "mem=2g", wantErr: "lower-case unit"},
		"negative":             {in: "cpu=-1", wantErr: "not a non-negative number"},
		"plus sign":            {in: "cpu=+1", wantErr: "not a non-negative number"},
		"usage time":           {in: "cpu=00:01:05", wantErr: "not a non-negative number"},
		"too large":            {in: "cpu=9223372036854775808", wantErr: "too large"},
		"too large with unit":  {in: "cpu=9000000P", wantErr: "too large"},
		"bad type":             {in: "c pu=1", wantErr: "not a Slurm TRES type"},
		"empty GPU type":       {in: "gres/gpu:=1", wantErr: "is not NAME or NAME:TYPE"},
		"empty name":           {in: "license/=1", wantErr: "empty TRES name"},
		"N/A is not a list":    {in: "N/A", wantErr: "want TYPE[/NAME]=COUNT"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTRES(tc.in)
			checkErr(t, err, tc.wantErr)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
	if !errors.Is(err, ErrSyntax) {
		t.Errorf("error %v does not wrap ErrSyntax", err)
	}
}

func TestFormatTRES(t *testing.T) {
	if s := FormatTRES([]TRES{GPU("h100", 16), GPU("", 2)}); s != "gres/gpu:h100=16,gres/gpu=2" {
		t.Errorf("FormatTRES = %q", s)
	}
	if s := FormatTRES([]TRES{{Type: "cpu", Count: 4}, {Type: "gres", Name: "gpu:a", Count: Infinite}}); s != "cpu=4,gres/gpu:a=NONE" {
		t.Errorf("FormatTRES = %q", s)
	}
}

func TestGPU(t *testing.T) {
	cases := map[string]struct {
		key    string
		typ    string
		wantOK bool
	}{
		"typed":        {"gres/gpu:h100", "h100", true},
		"MIG profile":  {"gres/gpu:1g.10gb", "1g.10gb", true},
		"untyped":      {"gres/gpu", "", true},
		"gpumem":       {"gres/gpumem", "", false},
		"gpuutil":      {"gres/gpuutil", "", false},
		"shard":        {"gres/shard", "", false},
		"cpu":          {"cpu", "", false},
		"empty type":   {"gres/gpu:", "", false},
		"license gpu":  {"license/gpu", "", false},
		"bad type":     {"gres/gpu:a b", "", false},
		"spaces":       {" gres/gpu:h100 ", "h100", true},
		"no gres type": {"gpu:h100", "", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			typ, ok := KeyGPU(tc.key)
			if typ != tc.typ || ok != tc.wantOK {
				t.Errorf("KeyGPU(%q) = %q, %v; want %q, %v", tc.key, typ, ok, tc.typ, tc.wantOK)
			}
		})
	}
	if typ, ok := GPU("h100", 2).GPU(); typ != "h100" || !ok {
		t.Errorf("GPU(h100).GPU() = %q, %v", typ, ok)
	}
	if k := GPU("", 1).Key(); k != "gres/gpu" {
		t.Errorf("GPU(\"\").Key() = %q", k)
	}
}

func TestParseTRESPer(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []TRES
		wantErr string
	}{
		"typed per node":   {in: "gres/gpu:h100:2", want: []TRES{GPU("h100", 2)}},
		"untyped":          {in: "gres/gpu:2", want: []TRES{GPU("", 2)}},
		"no count is one":  {in: "gres/gpu:h100", want: []TRES{GPU("h100", 1)}},
		"bare gres/gpu":    {in: "gres/gpu", want: []TRES{GPU("", 1)}},
		"older gres:":      {in: "gres:gpu:h100:1", want: []TRES{GPU("h100", 1)}},
		"oldest, bare":     {in: "gpu:h100:2", want: []TRES{GPU("h100", 2)}},
		"two types":        {in: "gres/gpu:1g.10gb:1,gres/gpu:3g.40gb:1", want: []TRES{GPU("1g.10gb", 1), GPU("3g.40gb", 1)}},
		"per task":         {in: "cpu=2,gres/gpu:1g.10gb=1", want: []TRES{{Type: "cpu", Count: 2}, GPU("1g.10gb", 1)}},
		"other gres":       {in: "gres/shard:2,license/matlab=1", want: []TRES{{Type: "gres", Name: "shard", Count: 2}, {Type: "license", Name: "matlab", Count: 1}}},
		"N/A":              {in: "N/A", want: nil},
		"empty":            {in: "", want: nil},
		"negative":         {in: "gres/gpu:h100=-1", wantErr: "not a non-negative number"},
		"two types in one": {in: "gres/gpu:h100:a100:1", wantErr: "more than one type"},
		"empty type":       {in: "gres/gpu::1", wantErr: "empty type"},
		"with indices":     {in: "gres/gpu:h100:1(IDX:0)", wantErr: "a request carries no socket or index list"},
		"bad count":        {in: "gres/gpu:h100:x", wantErr: "not a non-negative number"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTRESPer(tc.in)
			checkErr(t, err, tc.wantErr)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestParseTRESIDs(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []TRES
		wantErr string
	}{
		"job tres_alloc": {in: "1=8,2=16000,3=18446744073709551614,4=1,1001=2", want: []TRES{
			{ID: 1, Count: 8}, {ID: 2, Count: 16000}, {ID: 3, Count: NoValue}, {ID: 4, Count: 1}, {ID: 1001, Count: 2}}},
		"infinite":          {in: "1001=18446744073709551615", want: []TRES{{ID: 1001, Count: Infinite}}},
		"empty":             {in: "", want: nil},
		"leading comma":     {in: ",1=2", want: []TRES{{ID: 1, Count: 2}}},
		"trailing comma":    {in: "1003=1,", want: []TRES{{ID: 1003, Count: 1}}},
		"double comma":      {in: "1=1,,2=2", want: []TRES{{ID: 1, Count: 1}, {ID: 2, Count: 2}}},
		"repeat kept":       {in: "1003=1,1003=2", want: []TRES{{ID: 1003, Count: 1}, {ID: 1003, Count: 2}}},
		"zero count":        {in: "1001=0", want: []TRES{{ID: 1001, Count: 0}}},
		"no equals":         {in: "1001", wantErr: "want ID=COUNT"},
		"name form":         {in: "cpu=1", wantErr: "TRES id is not a positive number"},
		"id zero":           {in: "0=1", wantErr: "TRES id is not a positive number"},
		"garbage count":     {in: "1002=y", wantErr: "count is not a non-negative number"},
		"unit suffix":       {in: "2=2G", wantErr: "count is not a non-negative number"},
		"negative":          {in: "1=-1", wantErr: "count is not a non-negative number"},
		"above int64":       {in: "1=9223372036854775808", wantErr: "neither NO_VAL64 nor INFINITE64"},
		"above uint64":      {in: "1=18446744073709551616", wantErr: "count is not a non-negative number"},
		"space":             {in: "1= 2", wantErr: "count is not a non-negative number"},
		"error names entry": {in: "1=1,x=2", wantErr: `entry "x=2"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTRESIDs(tc.in)
			checkErr(t, err, tc.wantErr)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestScanTRESIDs(t *testing.T) {
	var got []TRES
	bad := ScanTRESIDs([]byte("1=1,x=2,1003=1,1002=y,,3=18446744073709551614"), func(id int, n int64) {
		got = append(got, TRES{ID: id, Count: n})
	})
	if bad != 2 {
		t.Errorf("bad = %d, want 2", bad)
	}
	if d := cmp.Diff([]TRES{{ID: 1, Count: 1}, {ID: 1003, Count: 1}, {ID: 3, Count: NoValue}}, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// A reader of millions of rows calls it once per row: it must not
	// allocate.
	row := []byte("1=8,2=16000,3=18446744073709551614,4=1,5=8,1001=2,1003=2")
	var sum int64
	if n := testing.AllocsPerRun(100, func() {
		ScanTRESIDs(row, func(id int, c int64) {
			if id > 1000 {
				sum += c
			}
		})
	}); n != 0 {
		t.Errorf("ScanTRESIDs allocates %v times per call", n)
	}
	if FormatTRESIDs([]TRES{{ID: 3, Count: NoValue}, {ID: 1001, Count: 2}}) != "3=18446744073709551614,1001=2" {
		t.Error("FormatTRESIDs does not write NO_VAL64 back")
	}
}

func TestParseGRES(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []GRES
		wantErr string
	}{
		"empty":              {in: "", want: nil},
		"null":               {in: "(null)", want: nil},
		"N/A":                {in: "N/A", want: nil},
		"typed with sockets": {in: "gpu:h100:4(S:0-3)", want: []GRES{{Name: "gpu", Type: "h100", Count: 4, Detail: "(S:0-3)"}}},
		"MIG pair": {in: "gpu:1g.10gb:7(S:0),gpu:3g.40gb:2(S:1)", want: []GRES{
			{Name: "gpu", Type: "1g.10gb", Count: 7, Detail: "(S:0)"}, {Name: "gpu", Type: "3g.40gb", Count: 2, Detail: "(S:1)"}}},
		"used with index list containing commas": {in: "gpu:h100:2(IDX:0,2),gpu:1g.10gb:0(IDX:N/A)", want: []GRES{
			{Name: "gpu", Type: "h100", Count: 2, Detail: "(IDX:0,2)"}, {Name: "gpu", Type: "1g.10gb", Count: 0, Detail: "(IDX:N/A)"}}},
		"untyped":            {in: "gpu:2", want: []GRES{{Name: "gpu", Count: 2}}},
		"no count":           {in: "gpu:h100", want: []GRES{{Name: "gpu", Type: "h100", Count: 1}}},
		"name only":          {in: "mps", want: []GRES{{Name: "mps", Count: 1}}},
		"other gres too":     {in: "gpu:h100:4(S:0),shard:8", want: []GRES{{Name: "gpu", Type: "h100", Count: 4, Detail: "(S:0)"}, {Name: "shard", Count: 8}}},
		"suffix K":           {in: "mps:100K", want: []GRES{{Name: "mps", Count: 102400}}},
		"suffix G typed":     {in: "bandwidth:lustre:4G", want: []GRES{{Name: "bandwidth", Type: "lustre", Count: 4 << 30}}},
		"suffix M untyped":   {in: "gpu:4M", want: []GRES{{Name: "gpu", Count: 4 << 20}}},
		"number as type":     {in: "gpu:3090:2", want: []GRES{{Name: "gpu", Type: "3090", Count: 2}}},
		"number alone":       {in: "gpu:3090", want: []GRES{{Name: "gpu", Count: 3090}}},
		"null type":          {in: "gpu:(null):0(IDX:N/A)", want: []GRES{{Name: "gpu", Count: 0, Detail: "(IDX:N/A)"}}},
		"null type no count": {in: "gpu:(null)", want: []GRES{{Name: "gpu", Count: 1}}},
		"no_consume":         {in: "gpu:h100:no_consume:2", want: []GRES{{Name: "gpu", Type: "h100", NoConsume: true, Count: 2}}},
		"TRES form":          {in: "gres/gpu:h100:2", want: []GRES{{Name: "gpu", Type: "h100", Count: 2}}},
		"old form":           {in: "gres:gpu:2", want: []GRES{{Name: "gpu", Count: 2}}},
		"empty IDX":          {in: "gpu:3g.40gb:0(IDX:)", want: []GRES{{Name: "gpu", Type: "3g.40gb", Count: 0, Detail: "(IDX:)"}}},
		"two details":        {in: "gpu:h100:2(S:0)(IDX:0-1)", want: []GRES{{Name: "gpu", Type: "h100", Count: 2, Detail: "(S:0)(IDX:0-1)"}}},
		"long type":          {in: "gpu:nvidia_a100-sxm4-80gb:4(S:0-1)", want: []GRES{{Name: "gpu", Type: "nvidia_a100-sxm4-80gb", Count: 4, Detail: "(S:0-1)"}}},
		"bad count":          {in: "gpu:h100:two", wantErr: `count "two" is not a non-negative number`},
		"unbalanced":         {in: "gpu:h100:2(S:0", wantErr: "unbalanced parenthesis"},
		"stray close":        {in: "gpu:h100:2)", wantErr: `count "2)" is not a non-negative number`},
		"empty entry":        {in: "gpu:h100:2,,gpu:a100:1", wantErr: "empty entry"},
		"trailing comma":     {in: "gpu:h100:2,", wantErr: "empty entry"},
		"two types":          {in: "gpu:h100:a100:1", wantErr: "more than one type"},
		"empty type":         {in: "gpu::1", wantErr: "empty type"},
		"colon, nothing":     {in: "gpu:", wantErr: "empty type"},
		"lower-case unit":    {in: "gpu:2g", wantErr: "count or type"},
		"fraction":           {in: "gpu:h100:1.5", wantErr: "has a fraction"},
		"negative":           {in: "gpu:h100:-1", wantErr: "not a non-negative number"},
		"CNT detail":         {in: "gpu:h100(CNT:2)", wantErr: "neither (S:...) nor (IDX:...)"},
		"bad index":          {in: "gpu:h100:2(IDX:3-1)", wantErr: "bad range"},
		"text after detail":  {in: "gpu:h100:2(S:0)x", wantErr: "text after the parenthesis"},
		"gres as name":       {in: "gres", wantErr: "not gres"},
		"no name":            {in: ":2", wantErr: "is not a name"},
		"no_consume twice":   {in: "gpu:no_consume:no_consume:1", wantErr: "no_consume given twice"},
		"too large":          {in: "gpu:9999999999999999P", wantErr: "too large"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseGRES(tc.in)
			checkErr(t, err, tc.wantErr)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestGRESDetail(t *testing.T) {
	gs, err := ParseGRES("gpu:h100:3(S:0-1)(IDX:0,2-3),gpu:a:0(IDX:N/A),gpu:b:1")
	if err != nil {
		t.Fatal(err)
	}
	if idx, ok := gs[0].Indices(); !ok || !cmp.Equal(idx, []int{0, 2, 3}) {
		t.Errorf("Indices() = %v, %v", idx, ok)
	}
	if s, ok := gs[0].Sockets(); !ok || !cmp.Equal(s, []int{0, 1}) {
		t.Errorf("Sockets() = %v, %v", s, ok)
	}
	if _, ok := gs[1].Indices(); ok {
		t.Error("IDX:N/A has indices")
	}
	if _, ok := gs[2].Indices(); ok {
		t.Error("no detail has indices")
	}
	if s := FormatGRES(gs); s != "gpu:h100:3(S:0-1)(IDX:0,2-3),gpu:a:0(IDX:N/A),gpu:b:1" {
		t.Errorf("FormatGRES = %q", s)
	}
	if s := (GRES{Name: "gpu", NoConsume: true, Count: 2}).String(); s != "gpu:no_consume:2" {
		t.Errorf("String() = %q", s)
	}
}

func TestExpandHostlist(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []string
		wantErr string
	}{
		"plain":          {in: "gpu-a", want: []string{"gpu-a"}},
		"list":           {in: "gpu-a,gpu-b", want: []string{"gpu-a", "gpu-b"}},
		"range":          {in: "gpu-[01-03]", want: []string{"gpu-01", "gpu-02", "gpu-03"}},
		"range and list": {in: "gpu-[01-03,7],cpu-a", want: []string{"gpu-01", "gpu-02", "gpu-03", "gpu-7", "cpu-a"}},
		"width grows":    {in: "n[9-11]", want: []string{"n9", "n10", "n11"}},
		"letters":        {in: "gpu-[a,c]", wantErr: "brackets hold numbers"},
		"one number":     {in: "gpu-[3]", want: []string{"gpu-3"}},
		"suffix":         {in: "n[1-2]-ib", want: []string{"n1-ib", "n2-ib"}},
		"short suffix":   {in: "r[1-2]n", want: []string{"r1n", "r2n"}},
		"mixed":          {in: "gpu[1-2],cpu-a", want: []string{"gpu1", "gpu2", "cpu-a"}},
		"node range":     {in: "node[01-03,7]", want: []string{"node01", "node02", "node03", "node7"}},
		"close first":    {in: "n]1[", wantErr: "unbalanced brackets"},
		"two groups":     {in: "rack[1-2]-n[01-02]", want: []string{"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"}},
		"empty":          {in: "", want: nil},
		"null":           {in: "(null)", want: nil},
		"none assigned":  {in: "None assigned", want: nil},
		"empty item":     {in: "a,,b", want: []string{"a", "b"}},
		"ALL":            {in: "ALL", wantErr: "ALL names every node"},
		"letter range":   {in: "gpu-[a-c]", wantErr: "brackets hold numbers"},
		"backwards":      {in: "n[3-1]", wantErr: "runs backwards"},
		"unbalanced":     {in: "n[1-2", wantErr: "unbalanced brackets"},
		"stray close":    {in: "n1-2]", wantErr: "unbalanced brackets"},
		"nested":         {in: "n[1-[2]]", wantErr: "unbalanced brackets"},
		"empty brackets": {in: "n[]", wantErr: "empty brackets"},
		"space":          {in: "gpu a", wantErr: "character Slurm does not allow"},
		"huge":           {in: "n[0-99999999]", wantErr: "more than 100000 names"},
		"huge product":   {in: "a[1-1000]b[1-1000]", wantErr: "more than 100000 names"},
		"N/A":            {in: "N/A", wantErr: "character Slurm does not allow"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ExpandHostlist(tc.in)
			checkErr(t, err, tc.wantErr)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestCompressHostlist(t *testing.T) {
	cases := map[string]struct {
		in   []string
		want string
	}{
		"none":              {nil, ""},
		"one":               {[]string{"gpu-a"}, "gpu-a"},
		"letters stay":      {[]string{"gpu-a", "gpu-b"}, "gpu-a,gpu-b"},
		"range":             {[]string{"gpu-01", "gpu-02", "gpu-03", "gpu-07"}, "gpu-[01-03,07]"},
		"unsorted, repeats": {[]string{"n3", "n1", "n2", "n1"}, "n[1-3]"},
		"widths apart":      {[]string{"n1", "n01"}, "n1,n01"},
		"natural grows":     {[]string{"n9", "n10", "n11"}, "n[9-11]"},
		"prefix order":      {[]string{"b1", "a1", "b2"}, "b[1-2],a1"},
		"single number":     {[]string{"gpu-07"}, "gpu-07"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := CompressHostlist(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestExpandRanges(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []int
		wantErr string
	}{
		"cores":        {in: "0-3", want: []int{0, 1, 2, 3}},
		"list":         {in: "0,2,4-5", want: []int{0, 2, 4, 5}},
		"one":          {in: "7", want: []int{7}},
		"at max":       {in: "65536", want: []int{65536}},
		"empty":        {in: "", wantErr: "bad range"},
		"empty item":   {in: "0,,1", wantErr: "bad range"},
		"sign":         {in: "+1", wantErr: "digits only"},
		"range signs":  {in: "+0-+3", wantErr: "digits only"},
		"negative":     {in: "-1", wantErr: "bad range"},
		"backwards":    {in: "3-1", wantErr: "N <= M"},
		"above max":    {in: "0-65537", wantErr: "<= 65536"},
		"space":        {in: "0, 1", wantErr: "bad range"},
		"letters":      {in: "a-b", wantErr: "bad range"},
		"gres.conf":    {in: "0-3\nNodeName=x", wantErr: "bad range"},
		"open range":   {in: "2-", wantErr: "bad range"},
		"double range": {in: "1-2-3", wantErr: "bad range"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ExpandRanges(tc.in, maxIndex)
			checkErr(t, err, tc.wantErr)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}
