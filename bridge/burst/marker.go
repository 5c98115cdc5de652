package burst

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MarkerPrefix starts the note gpubridge writes into a moved job's admin
// comment. Only operators can set admin comments, so a job that carries it
// was moved by gpubridge.
const MarkerPrefix = "gpubridge:burst"

// NoBurstToken in a job's comment (sbatch --comment=gpubridge:noburst)
// keeps the job out of the on-demand tier.
const NoBurstToken = "gpubridge:noburst"

// Marker is what the admin comment records about a move:
//
//	gpubridge:burst moved=2026-05-04T10:00:00Z reason=QOSGrpGRES from=pool/acme gpus=h100:1 est=1200
//
// est is the estimated cost in minor units when the tenant has a budget
// (0 when it has none).
type Marker struct {
	Moved     time.Time // UTC, whole seconds
	Reason    string    // Slurm's state reason at the move
	Partition string    // partition the job was moved from
	QOS       string    // QOS the job was moved from
	GPUs      string    // Request.String()
	Estimate  int64     // minor units
}

// String is the marker as written into the admin comment.
func (m Marker) String() string {
	return fmt.Sprintf("%s moved=%s reason=%s from=%s/%s gpus=%s est=%d", MarkerPrefix,
		m.Moved.UTC().Format(time.RFC3339), m.Reason, m.Partition, m.QOS, m.GPUs, m.Estimate)
}

// ParseMarker finds gpubridge's marker in an admin comment. ok is false when
// there is none (or it is damaged: then the job is treated as not moved by
// gpubridge).
func ParseMarker(adminComment string) (Marker, bool) {
	i := strings.Index(adminComment, MarkerPrefix+" ")
	if i < 0 {
		return Marker{}, false
	}
	rest := adminComment[i+len(MarkerPrefix)+1:]
	if j := strings.Index(rest, ";"); j >= 0 {
		rest = rest[:j]
	}
	var m Marker
	seenMoved := false
	for f := range strings.FieldsSeq(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "moved":
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return Marker{}, false
			}
			m.Moved, seenMoved = t.UTC(), true
		case "reason":
			m.Reason = v
		case "from":
			m.Partition, m.QOS, _ = strings.Cut(v, "/")
		case "gpus":
			m.GPUs = v
		case "est":
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				m.Estimate = n
			}
		}
	}
	if !seenMoved {
		return Marker{}, false
	}
	return m, true
}

// WithMarker returns the admin comment to write: the job's own admin
// comment with any earlier gpubridge marker replaced by m (a job whose
// earlier move was only half applied carries one), or m appended after "; ".
func WithMarker(adminComment string, m Marker) string {
	kept := stripMarker(adminComment)
	if kept == "" {
		return m.String()
	}
	return kept + "; " + m.String()
}

// stripMarker removes gpubridge's marker (up to the next ';') from s.
func stripMarker(s string) string {
	i := strings.Index(s, MarkerPrefix+" ")
	if i < 0 {
		return strings.TrimSpace(s)
	}
	head, tail := s[:i], s[i:]
	if j := strings.Index(tail, ";"); j >= 0 {
		tail = tail[j+1:]
	} else {
		tail = ""
	}
	head = strings.TrimRight(strings.TrimSpace(head), ";")
	tail = strings.TrimSpace(tail)
	switch {
	case head == "":
		return tail
	case tail == "":
		return strings.TrimSpace(head)
	}
	return strings.TrimSpace(head) + "; " + tail
}

// HasNoBurst reports whether a job comment opts the job out.
func HasNoBurst(comment string) bool {
	for f := range strings.FieldsFuncSeq(comment, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '\t' }) {
		if strings.EqualFold(f, NoBurstToken) {
			return true
		}
	}
	return false
}
