package reserve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// PerNodeKey is the admin's `modify booking ID set pernode=TYPE:COUNT,...`:
// the GPUs per node of a whole-node booking stored before admission
// recorded them (Service.RecordPerNode). It is not one of ModifyKeys: the
// tenant's own changes never set it.
const PerNodeKey = "pernode"

// maxPerNode bounds one type's GPUs per node (MIG slices included: 8 GPUs
// of 7 slices are 56): a larger figure is a typo, and it would be charged.
const maxPerNode = 128

// ParsePerNode reads pernode=TYPE:COUNT[,TYPE:COUNT...] (e.g. h100:8, or
// h100:1,1g.10gb:7 for a node with MIG slices). A count of 0 is allowed
// (a type the class's nodes have none of); at least one type is needed.
func ParsePerNode(s string) (map[string]int, Problems) {
	var ps Problems
	out := map[string]int{}
	s = strings.TrimSpace(s)
	if s == "" {
		ps.Add(PerNodeKey, "empty: give the GPUs per node of the booking's class by type, e.g. pernode=h100:8 (pernode=h100:1,1g.10gb:7 with MIG slices)")
		return nil, ps
	}
	for p := range strings.SplitSeq(s, ",") {
		t, c, ok := strings.Cut(strings.TrimSpace(p), ":")
		t = strings.TrimSpace(t)
		n, err := strconv.Atoi(strings.TrimSpace(c))
		switch {
		case !ok || t == "":
			ps.Add(PerNodeKey, "%q: want TYPE:COUNT, e.g. h100:8", p)
		case !gresTypeName(t):
			ps.Add(PerNodeKey, "%q: %q is not a GPU type name (letters, digits, '.', '_', '-')", p, t)
		case err != nil:
			ps.Add(PerNodeKey, "%q: count %q is not a whole number", p, strings.TrimSpace(c))
		case n < 0 || n > maxPerNode:
			ps.Add(PerNodeKey, "%q: %d GPUs per node is out of range (0 to %d)", p, n, maxPerNode)
		default:
			if _, dup := out[t]; dup {
				ps.Add(PerNodeKey, "type %s given twice", t)
			}
			out[t] = n
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return out, nil
}

func gresTypeName(t string) bool {
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// FormatPerNode writes GPUs per node by type as pernode= takes them:
// "h100:8", sorted by type ("none" for no GPUs).
func FormatPerNode(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	ps := make([]string, 0, len(m))
	for _, t := range slices.Sorted(maps.Keys(m)) {
		ps = append(ps, t+":"+strconv.Itoa(m[t]))
	}
	return strings.Join(ps, ",")
}

// RecordPerNode records the GPUs per node of a whole-node booking that was
// stored before admission recorded them (its PerNode is nil: bookings
// made before migration 00480). Its charge and its node health credits
// need the figure, and the booking is otherwise left uncharged; an ended
// booking cannot take it from the pool through Modify. The figure is the
// admin's (the pool may have changed since the booking); one already
// recorded is never rewritten, as charges were made from it. The change is
// audited ("record-per-node"); nothing else about the booking changes.
func (s *Service) RecordPerNode(ctx context.Context, actor string, id int64, per map[string]int) (before, after Booking, err error) {
	if len(per) == 0 {
		return Booking{}, Booking{}, Problems{{Field: PerNodeKey, Msg: "give at least one TYPE:COUNT, e.g. pernode=h100:8"}}
	}
	err = s.Store.Atomic(ctx, nil, func(tx Tx) error {
		cur, err := tx.Get(ctx, id)
		if err != nil {
			return err
		}
		before = cur
		switch {
		case cur.Kind != KindNode:
			return Problems{{Field: PerNodeKey, Msg: fmt.Sprintf("booking %d is for GPUs (%s); pernode= is for a whole-node booking stored without its GPUs per node", id, cur.What())}}
		case cur.PerNode != nil:
			return Problems{{Field: PerNodeKey, Msg: fmt.Sprintf("booking %d already records %s per node; a recorded figure is not rewritten: its charges were made from it", id, FormatPerNode(cur.PerNode))}}
		}
		nb := cur
		nb.PerNode = maps.Clone(per)
		nb.UpdatedAt = s.now()
		if err := tx.Update(ctx, actor, "record-per-node", nb); err != nil {
			return err
		}
		after = nb
		return nil
	})
	if err != nil {
		return Booking{}, Booking{}, err
	}
	return before, after, nil
}
