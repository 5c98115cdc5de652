package slurmrest

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// TRES is one trackable resource with a count (cpu=8, gres/gpu:h100=4);
// Slurm's strings of TRES are read by internal/slurmstr, whose type this is.
type TRES = slurmstr.TRES

// GPU is the TRES gres/gpu:<typ> (gres/gpu when typ is empty) with count n.
func GPU(typ string, n int64) TRES { return slurmstr.GPU(typ, n) }

// FormatTRES joins TRES as Slurm writes them: "cpu=4,gres/gpu:h100=2".
func FormatTRES(ts []TRES) string { return slurmstr.FormatTRES(ts) }

// ListTRES returns every TRES slurmdbd knows, with its id
// (GET /slurmdb/{v}/tres/).
func (c *Client) ListTRES(ctx context.Context) ([]TRES, error) {
	var resp struct {
		envelope
		TRES []wTRES `json:"TRES"`
	}
	if err := c.do(ctx, http.MethodGet, c.dbPath("tres/"), nil, nil, &resp); err != nil {
		return nil, fmt.Errorf("list TRES: %w", err)
	}
	return fromWireTRES(resp.TRES), nil
}
