package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

type fakeClient struct {
	nodes   []slurmrest.Node
	res     []slurmrest.Reservation
	created []slurmrest.ReservationSpec
	updated []slurmrest.ReservationSpec
	deleted []string
	err     error
}

func (f *fakeClient) ListNodes(context.Context) ([]slurmrest.Node, error) { return f.nodes, nil }
func (f *fakeClient) ListReservations(context.Context) ([]slurmrest.Reservation, error) {
	return f.res, nil
}
func (f *fakeClient) CreateReservation(_ context.Context, s slurmrest.ReservationSpec) (string, error) {
	f.created = append(f.created, s)
	return s.Name, f.err
}
func (f *fakeClient) UpdateReservations(_ context.Context, s []slurmrest.ReservationSpec) error {
	f.updated = append(f.updated, s...)
	return f.err
}
func (f *fakeClient) DeleteReservation(_ context.Context, name string) error {
	f.deleted = append(f.deleted, name)
	return f.err
}

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func TestInventory(t *testing.T) {
	fc := &fakeClient{
		nodes: []slurmrest.Node{
			{Name: "cpu-a", State: []string{"IDLE"}, Partitions: []string{"cpu"}},
			{Name: "gpu-a", State: []string{"IDLE"}, Partitions: []string{"pool", "ondemand"}, GRES: []slurmrest.GRES{{Name: "gpu", Type: "h100", Count: 4}}},
			{Name: "gpu-b", State: []string{"IDLE", "DRAIN"}, Reason: "gpubridge: ecc", Partitions: []string{"pool"},
				GRES: []slurmrest.GRES{{Name: "gpu", Type: "1g.10gb", Count: 7}, {Name: "gpu", Type: "3g.40gb", Count: 2}, {Name: "shard", Count: 4}}},
			{Name: "gpu-c", State: []string{"MIXED"}, Partitions: []string{"other"}, GRES: []slurmrest.GRES{{Name: "gpu", Type: "a100", Count: 8}}},
		},
		res: []slurmrest.Reservation{
			{Name: "gpubridge-3", Accounts: []string{"acme"}, Nodes: "gpu-a", Start: t0, End: t0.Add(time.Hour), Flags: []string{"IGNORE_JOBS"}, TRES: "cpu=4,gres/gpu:h100=2,gres/gpu=2"},
			{Name: "site", Accounts: []string{"root"}, Nodes: "gpu-[a,b]", Start: t0, End: t0.Add(time.Hour)},
			{Name: "whole", Accounts: []string{"root"}, Nodes: "node[08-10],gpu-b", Start: t0, End: t0.Add(time.Hour), TRES: "cpu=32"},
			{Name: "untyped", Nodes: "gpu-a", Start: t0, End: t0.Add(time.Hour), TRES: "cpu=2,gres/gpu=1"},
		},
	}
	a := New(fc, "pool")
	a.c = fc
	_, err := a.Inventory(context.Background())
	if err == nil {
		t.Fatal("a letter range was accepted in a hostlist")
	}
	fc.res[1].Nodes = "gpu-a,gpu-b"
	inv, err := a.Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := reserve.Inventory{
		Nodes: []reserve.Node{
			{Name: "gpu-a", GPUs: map[string]int{"h100": 4}},
			{Name: "gpu-b", GPUs: map[string]int{"1g.10gb": 7, "3g.40gb": 2}, Down: "IDLE+DRAIN (gpubridge: ecc)"},
		},
		Reservations: []reserve.Reservation{
			{Name: "gpubridge-3", Accounts: []string{"acme"}, Start: t0, End: t0.Add(time.Hour), Flags: []string{"IGNORE_JOBS"}, GPUs: map[string]int{"h100": 2}, Nodes: []string{"gpu-a"}},
			{Name: "site", Accounts: []string{"root"}, Start: t0, End: t0.Add(time.Hour), GPUs: map[string]int{}, Nodes: []string{"gpu-a", "gpu-b"}, WholeNodes: true},
			{Name: "whole", Accounts: []string{"root"}, Start: t0, End: t0.Add(time.Hour), GPUs: map[string]int{}, Nodes: []string{"node08", "node09", "node10", "gpu-b"}, WholeNodes: true},
			{Name: "untyped", Start: t0, End: t0.Add(time.Hour), GPUs: map[string]int{}, UntypedGPUs: 1, Nodes: []string{"gpu-a"}},
		},
	}
	if diff := cmp.Diff(want, inv); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestWrites(t *testing.T) {
	ctx := context.Background()
	fc := &fakeClient{}
	a := New(fc, "pool")
	gpu := reserve.ReservationSpec{Name: "gpubridge-1", Accounts: []string{"acme"}, Start: t0, End: t0.Add(time.Hour), GPUType: "h100", Count: 2, Flags: []string{"IGNORE_JOBS"}}
	if err := a.CreateReservation(ctx, gpu); err != nil {
		t.Fatal(err)
	}
	node := reserve.ReservationSpec{Name: "gpubridge-2", Accounts: []string{"acme"}, Start: t0, End: t0.Add(time.Hour), Nodes: []string{"gpu-a"}, Flags: []string{"IGNORE_JOBS"}}
	if err := a.CreateReservation(ctx, node); err != nil {
		t.Fatal(err)
	}
	want := []slurmrest.ReservationSpec{
		{Name: "gpubridge-1", Accounts: []string{"acme"}, Start: t0, End: t0.Add(time.Hour), Flags: []string{"IGNORE_JOBS"}, TRES: []slurmrest.TRES{slurmrest.GPU("h100", 2)}},
		{Name: "gpubridge-2", Accounts: []string{"acme"}, Start: t0, End: t0.Add(time.Hour), Flags: []string{"IGNORE_JOBS"}, Nodes: []string{"gpu-a"}},
	}
	if diff := cmp.Diff(want, fc.created); diff != "" {
		t.Errorf("created (-want +got)\n%s", diff)
	}
	if err := a.UpdateReservation(ctx, gpu); err != nil {
		t.Fatal(err)
	}
	if len(fc.updated) != 1 || fc.updated[0].TRES != nil || fc.updated[0].Nodes != nil {
		t.Errorf("update sends TRES or nodes: %+v", fc.updated)
	}
	for _, bad := range []reserve.ReservationSpec{
		{Name: "x", GPUType: "h100", Count: 1, Flags: []string{"IGNORE_JOBS", "OVERLAP"}},
		{Name: "x", GPUType: "h100", Count: 1},
		{Name: "x", Flags: []string{"IGNORE_JOBS"}},
	} {
		if err := a.CreateReservation(ctx, bad); !errors.Is(err, slurmrest.ErrInvalid) {
			t.Errorf("create %+v: %v", bad, err)
		}
	}
	if err := a.UpdateReservation(ctx, reserve.ReservationSpec{Name: "x", Flags: []string{"OVERLAP", "IGNORE_JOBS"}}); !errors.Is(err, slurmrest.ErrInvalid) {
		t.Errorf("update with OVERLAP: %v", err)
	}
}

func TestErrorMapping(t *testing.T) {
	ctx := context.Background()
	slurmErr := func(n int) error {
		return fmt.Errorf("create: %w", &slurmrest.SlurmError{Method: "POST", HTTPStatus: 422, Errors: []slurmrest.ErrorDetail{{Number: n, Text: "x"}}})
	}
	gpu := reserve.ReservationSpec{Name: "gpubridge-1", GPUType: "h100", Count: 1, Flags: []string{"IGNORE_JOBS"}}
	cases := map[string]struct {
		err  error
		call func(a *Adapter) error
		want error
	}{
		"busy":           {slurmErr(2016), func(a *Adapter) error { return a.CreateReservation(ctx, gpu) }, reserve.ErrBusy},
		"overlap":        {slurmErr(2058), func(a *Adapter) error { return a.CreateReservation(ctx, gpu) }, reserve.ErrBusy},
		"in use":         {slurmErr(2055), func(a *Adapter) error { return a.DeleteReservation(ctx, "gpubridge-1") }, reserve.ErrInUse},
		"update in use":  {slurmErr(2055), func(a *Adapter) error { return a.UpdateReservation(ctx, gpu) }, reserve.ErrInUse},
		"already gone":   {slurmErr(2053), func(a *Adapter) error { return a.DeleteReservation(ctx, "gpubridge-1") }, nil},
		"invalid acount": {slurmErr(2045), func(a *Adapter) error { return a.CreateReservation(ctx, gpu) }, slurmrest.ErrInvalid},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a := New(&fakeClient{err: c.err}, "pool")
			err := c.call(a)
			switch {
			case c.want == nil && err != nil:
				t.Errorf("err = %v; want nil", err)
			case c.want == slurmrest.ErrInvalid:
				if err == nil || errors.Is(err, reserve.ErrBusy) || errors.Is(err, reserve.ErrInUse) {
					t.Errorf("err = %v; want a plain error", err)
				}
			case c.want != nil && !errors.Is(err, c.want):
				t.Errorf("err = %v; want %v", err, c.want)
			}
		})
	}
}

func TestExpandHostlist(t *testing.T) {
	cases := map[string][]string{
		"":                      nil,
		"(null)":                nil,
		"gpu-a":                 {"gpu-a"},
		"gpu-a,gpu-b":           {"gpu-a", "gpu-b"},
		"node[01-03,07]":        {"node01", "node02", "node03", "node07"},
		"r[1-2]n,x":             {"r1n", "r2n", "x"},
		"dgx[9-11]":             {"dgx9", "dgx10", "dgx11"},
		"node[001-002],gpu-[3]": {"node001", "node002", "gpu-3"},
	}
	for in, want := range cases {
		got, err := expandHostlist(in)
		if err != nil || !cmp.Equal(want, got) {
			t.Errorf("expandHostlist(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"gpu-[a,b]", "n[1-2][3-4]", "n[3-1]", "n[1-"} {
		if _, err := expandHostlist(bad); err == nil {
			t.Errorf("expandHostlist(%q) accepted", bad)
		}
	}
}
