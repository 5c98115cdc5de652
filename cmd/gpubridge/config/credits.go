package config

import (
	"time"

	"github.com/gpubridge/gpubridge/internal/money"
)

// HealthCredits is the node health credit policy (docs/health.md#credits):
// a tenant's job run that ended NODE_FAIL, or was killed when gpubridge
// stopped its node, is credited its charged amount in the ledger.
type HealthCredits struct {
	// Enabled turns the credit job on (schedules.healthCredits runs it).
	Enabled bool `json:"enabled"`
	// MinLoss is the smallest loss credited, an amount in the rate card's
	// currency ("0.50"); a loss below it yields no credit. "0" credits
	// every charged loss.
	MinLoss string `json:"minLoss"`
	// KillWindow: a job that ended other than COMPLETED within this after
	// gpubridge stopped its node (a fatal check) was killed by it.
	KillWindow Duration `json:"killWindow"`
	// Lookback is how far back each run of the job looks for ended runs
	// (a run is credited once its end is ingested and priced).
	Lookback Span `json:"lookback"`
}

func defaultHealthCredits() HealthCredits {
	return HealthCredits{Enabled: true, MinLoss: "0", KillWindow: Duration{2 * time.Minute}, Lookback: Span{7 * 24 * time.Hour}}
}

// MinLossAmount is MinLoss as a currency-less amount (Validate checked it).
func (h HealthCredits) MinLossAmount() (money.Amount, error) { return money.Parse(h.MinLoss) }

func (c Config) validateHealthCredits(add func(field, format string, a ...any)) {
	h := c.Health.Credits
	if a, err := money.Parse(h.MinLoss); err != nil || a.Sign() < 0 {
		add("health.credits.minLoss", "%q is not an amount of at least 0 in the rate card's currency, such as \"0.50\" (\"0\" credits every charged loss)", h.MinLoss)
	}
	if d := h.KillWindow.Duration; d < 0 || d > time.Hour {
		add("health.credits.killWindow", "is %s; must be from 0 to 1h, such as 2m", d)
	}
	if d := h.Lookback.Duration; d < time.Hour || d > 92*24*time.Hour {
		add("health.credits.lookback", "is %s; must be from 1h to 92d, such as 7d (a run is credited once its end is ingested, within this)", d)
	}
}
