package burst

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRequest(t *testing.T) {
	cases := map[string]struct {
		in      RequestFields
		want    Request
		wantErr bool
	}{
		"tres_req_str typed total": {
			in:   RequestFields{TRESRequested: "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=2,gres/gpu:h100=2"},
			want: Request{"h100": 2},
		},
		"tres_req_str two types": {
			in:   RequestFields{TRESRequested: "cpu=2,gres/gpu=3,gres/gpu:1g.10gb=2,gres/gpu:3g.40gb=1"},
			want: Request{"1g.10gb": 2, "3g.40gb": 1},
		},
		"tres_req_str wins over per node": {
			in:   RequestFields{TRESRequested: "gres/gpu:h100=4", TRESPerNode: "gres/gpu:h100:2", Nodes: 3},
			want: Request{"h100": 4},
		},
		"per job when req has no gpu": {
			in:   RequestFields{TRESRequested: "cpu=1,mem=1G", TRESPerJob: "gres/gpu:h100:3"},
			want: Request{"h100": 3},
		},
		"per node times nodes": {
			in:   RequestFields{TRESPerNode: "gres/gpu:h100:2", Nodes: 2},
			want: Request{"h100": 4},
		},
		"per node zero nodes is one": {
			in:   RequestFields{TRESPerNode: "gres/gpu:1g.10gb:1"},
			want: Request{"1g.10gb": 1},
		},
		"old gres: spelling": {
			in:   RequestFields{TRESPerNode: "gres:gpu:h100:1"},
			want: Request{"h100": 1},
		},
		"type without count is one": {
			in:   RequestFields{TRESPerNode: "gres/gpu:h100"},
			want: Request{"h100": 1},
		},
		"bare gpu spelling": {
			in:   RequestFields{TRESPerNode: "gpu:h100:2"},
			want: Request{"h100": 2},
		},
		"untyped only": {
			in:   RequestFields{TRESRequested: "cpu=1,gres/gpu=2", TRESPerNode: "gres/gpu:2"},
			want: Request{"": 2},
		},
		"untyped per node times nodes is not used when req has it": {
			in:   RequestFields{TRESRequested: "gres/gpu=2", TRESPerNode: "gres/gpu:1", Nodes: 2},
			want: Request{"": 2},
		},
		"typed per node beats untyped req": {
			in:   RequestFields{TRESRequested: "cpu=1,gres/gpu=1", TRESPerNode: "gres/gpu:h100:1"},
			want: Request{"h100": 1},
		},
		"other gres ignored": {
			in:   RequestFields{TRESPerNode: "gres/shard:2,gres/gpu:h100:1,license/matlab=1"},
			want: Request{"h100": 1},
		},
		"gpumem ignored": {
			in:   RequestFields{TRESRequested: "gres/gpumem=80G,gres/gpu:h100=1"},
			want: Request{"h100": 1},
		},
		"no gpu": {
			in:   RequestFields{TRESRequested: "cpu=4,mem=4000M,node=1,billing=4"},
			want: Request{},
		},
		"empty": {
			in:   RequestFields{},
			want: Request{},
		},
		"spaces": {
			in:   RequestFields{TRESRequested: " cpu=1 , gres/gpu:h100=1 "},
			want: Request{"h100": 1},
		},
		"bad count": {
			in:      RequestFields{TRESRequested: "gres/gpu:h100=x"},
			wantErr: true,
		},
		"negative count": {
			in:      RequestFields{TRESPerJob: "gres/gpu:h100=-1"},
			wantErr: true,
		},
		"two types in one entry": {
			in:      RequestFields{TRESPerNode: "gres/gpu:h100:a100:1"},
			wantErr: true,
		},
		"empty type": {
			in:      RequestFields{TRESPerNode: "gres/gpu::1"},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRequest(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestRequestString(t *testing.T) {
	cases := map[string]struct {
		in   Request
		want string
	}{
		"empty":    {Request{}, ""},
		"sorted":   {Request{"h100": 2, "1g.10gb": 1}, "1g.10gb:1,h100:2"},
		"untyped":  {Request{"": 2}, "gpu:2"},
		"zero out": {Request{"h100": 0, "a100": 1}, "a100:1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.in.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
