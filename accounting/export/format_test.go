package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// The fast formatters against the fmt, time and encoding/json formatting
// they replace, on random and edge values.

func oldGPUHours(sec int64) string {
	neg := sec < 0
	if neg {
		sec = -sec
	}
	micro := microHours(sec)
	s := fmt.Sprintf("%d.%06d", micro/1_000_000, micro%1_000_000)
	if neg && micro != 0 {
		s = "-" + s
	}
	return s
}

func edgeInts(r *rand.Rand, n int) []int64 {
	vs := []int64{0, 1, -1, 1799, 1800, -1800, 3599, 3600, -3600, 86399, 86400, math.MaxInt64, math.MinInt64, math.MaxInt64 / 1_000_000, -math.MaxInt64 / 1_000_000,
		253402300799, 253402300800, 951782400, 951868800, 4107542400, 1e12}
	for range n {
		switch r.IntN(4) {
		case 0:
			vs = append(vs, r.Int64()-r.Int64())
		case 1:
			vs = append(vs, r.Int64N(1e7)-5e6)
		default:
			vs = append(vs, r.Int64N(maxFastUnix+1e9))
		}
	}
	return vs
}

func TestFastFormatsEqualFmt(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 3))
	for _, v := range edgeInts(r, 200000) {
		if got, want := GPUHours(v), oldGPUHours(v); got != want {
			t.Fatalf("GPUHours(%d) = %q, fmt gives %q", v, got, want)
		}
		if got, want := unixRFC(v), time.Unix(v, 0).UTC().Format("2006-01-02T15:04:05Z"); got != want {
			t.Fatalf("unixRFC(%d) = %q, time.Format gives %q", v, got, want)
		}
	}
}

func randomString(r *rand.Rand) string {
	alphabet := []string{"a", "Z", "0", "9", "-", "_", ".", " ", ",", "\"", "\\", "<", ">", "&", "=", "+", "@", "\t", "\r", "\n", "\x00", "\x7f",
		"é", "\u2028", "\u00a0", "\u0085", "\xff", "'", ":", "/", "\\."}
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func TestJSONLineEqualsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 4))
	for range 20000 {
		jl := jsonLine{randomString(r), r.IntN(2) == 0, jsonProfile{randomString(r), randomString(r), randomString(r)},
			randomString(r), randomString(r), uint32(r.IntN(3) * r.IntN(math.MaxInt32)), randomString(r), randomString(r),
			randomString(r), r.IntN(3), randomString(r), randomString(r), r.Int64() - r.Int64(), randomString(r), randomString(r), r.Int64() - r.Int64(),
			r.Int64() - r.Int64(), randomString(r), randomString(r), randomString(r), r.Int64() - r.Int64(), int64(r.IntN(2)) * (r.Int64() - r.Int64())}
		if r.IntN(2) == 0 {
			jl.Submit = ""
		}
		want, err := json.Marshal(jl)
		if err != nil {
			t.Fatal(err)
		}
		if got := jl.appendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("%+v:\n%s\njson.Marshal:\n%s", jl, got, want)
		}
	}
}

// oldCellWrite is cellWriter.Write without the plainCell shortcut.
func oldCellWrite(w *bufio.Writer, rec []string) {
	for i, f := range rec {
		if i > 0 {
			w.WriteByte(',')
		}
		f, forced := Neutralize(f)
		quote := forced || f != "" && (f == `\.` || strings.ContainsAny(f, ",\"\r\n") || unicode.IsSpace(first(f)))
		if !quote {
			w.WriteString(f)
			continue
		}
		w.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
	}
	w.WriteString("\n")
}

func first(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }

func TestCellWriterPlainCells(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 5))
	var got, want bytes.Buffer
	cw := newCellWriter(&got)
	ww := bufio.NewWriter(&want)
	for range 20000 {
		rec := make([]string, 1+r.IntN(5))
		for i := range rec {
			rec[i] = randomString(r)
			if r.IntN(4) == 0 {
				rec[i] = fmt.Sprint(r.Int64N(2000)-1000, ".", r.IntN(100))
			}
		}
		if err := cw.Write(rec); err != nil {
			t.Fatal(err)
		}
		oldCellWrite(ww, rec)
	}
	cw.Flush()
	ww.Flush()
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("cellWriter output differs from the cell-by-cell rules")
	}
}

func TestZeroCells(t *testing.T) {
	if zeroHours != GPUHours(0) || secondsCell(0) != i64(0) || hoursCell(7) != GPUHours(7) {
		t.Errorf("zero cells %q %q", zeroHours, secondsCell(0))
	}
}
