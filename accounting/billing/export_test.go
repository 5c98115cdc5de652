package billing

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/export/exporttest"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

// TestExportFOCUSFiles: a FOCUS export to a file gets its metadata beside
// it (or at MetadataPath); the data conforms to FOCUS 1.2 with that
// metadata; a closed month's data and metadata are the same bytes at any
// later time; metadata of another format is refused before anything is
// written; the site's names come from Parties.
func TestExportFOCUSFiles(t *testing.T) {
	ctx := context.Background()
	b, l, cards := books(t)
	b.Parties = export.Parties{Provider: "Research Computing", InvoiceIssuer: "Finance"}
	now := ledgertest.TSTime("2026-11-20 09:30:00")
	b.Clock = func() time.Time { return now }
	dir := t.TempDir()
	path := filepath.Join(dir, "nov.csv")
	if err := b.Export(ctx, ExportRequest{Period: nov, Options: export.Options{Format: export.FOCUS}, Path: path}, nil); err != nil {
		t.Fatal(err)
	}
	data, md := read(t, path), read(t, path+export.MetadataSuffix)
	card, _, _ := cards.Current(ctx)
	exporttest.Conforms(t, "open", data, exporttest.Options(card, md, nil))
	if !bytes.Contains(md, []byte(`"CreationDate": "2026-11-20T09:30:00Z"`)) {
		t.Errorf("open month's CreationDate is not the export time:\n%s", md)
	}
	if !bytes.Contains(data, []byte(",Research Computing,Research Computing,")) || !bytes.Contains(data, []byte(",Finance,")) {
		t.Errorf("provider or issuer names missing:\n%s", data)
	}
	for _, p := range []string{path, path + export.MetadataSuffix} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != export.FileMode {
			t.Errorf("%s: %v %v", p, st.Mode(), err)
		}
	}

	// Close November; export it twice, a day apart, summary and detail.
	asOf := ledgertest.TS("2026-12-01 01:00:00")
	if _, err := l.ApplyBatch(ctx, cluster, asOf, meter.Batch{Source: "t", From: 0, Through: asOf}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReplaceAccruals(ctx, cluster, asOf, nil); err != nil {
		t.Fatal(err)
	}
	c := Closer{Cluster: cluster, Ledger: l, Cards: cards, Labels: b.Labels, Clock: func() time.Time { return time.Unix(asOf, 0) }}
	rec, err := c.Close(ctx, CloseOptions{Period: nov, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, detail := range []bool{false, true} {
		var first [2][]byte
		for i, at := range []string{"2026-12-02 00:00:00", "2027-03-01 12:00:00"} {
			now = ledgertest.TSTime(at)
			mdPath := filepath.Join(dir, "meta", "closed.json")
			os.MkdirAll(filepath.Dir(mdPath), 0o755)
			if err := b.Export(ctx, ExportRequest{Period: nov, Options: export.Options{Format: export.FOCUS, Detail: detail}, Path: path, MetadataPath: mdPath}, nil); err != nil {
				t.Fatal(err)
			}
			got := [2][]byte{read(t, path), read(t, mdPath)}
			if i == 0 {
				first = got
				inv := map[string]string{export.InvoiceID(cluster, nov): rec.Amount.String()}
				exporttest.Conforms(t, "closed", got[0], exporttest.Options(rec.Snapshot.Card, got[1], inv))
				continue
			}
			if !bytes.Equal(first[0], got[0]) || !bytes.Equal(first[1], got[1]) {
				t.Errorf("detail %v: closed month's export changed between two exports", detail)
			}
		}
		if !bytes.Contains(first[1], []byte(`"CreationDate": "2026-12-01T01:00:00Z"`)) {
			t.Errorf("closed month's CreationDate is not its close time:\n%s", first[1])
		}
		if !bytes.Contains(first[0], []byte(","+export.InvoiceID(cluster, nov)+",")) {
			t.Errorf("closed month without its InvoiceId:\n%s", first[0])
		}
	}

	// Metadata of a CSV export: refused, nothing written.
	csvPath := filepath.Join(dir, "nov-plain.csv")
	err = b.Export(ctx, ExportRequest{Period: nov, Options: export.Options{Format: export.CSV}, Path: csvPath, MetadataPath: filepath.Join(dir, "m.json")}, nil)
	if !errors.Is(err, ErrMetadataFormat) {
		t.Errorf("metadata of a CSV export: %v", err)
	}
	if _, err := os.Stat(csvPath); !os.IsNotExist(err) {
		t.Errorf("the refused export wrote %s (%v)", csvPath, err)
	}
	// A CSV export to a file has no sidecar; to a writer, none either.
	if err := b.Export(ctx, ExportRequest{Period: nov, Options: export.Options{Format: export.CSV}, Path: csvPath}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(csvPath + export.MetadataSuffix); !os.IsNotExist(err) {
		t.Errorf("a CSV export wrote FOCUS metadata (%v)", err)
	}
	var w strings.Builder
	if err := b.Export(ctx, ExportRequest{Period: nov, Options: export.Options{Format: export.FOCUS}}, &w); err != nil || !strings.HasPrefix(w.String(), "BilledCost,") {
		t.Errorf("FOCUS to a writer: %v\n%s", err, w.String())
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
