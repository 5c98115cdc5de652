package lease

import (
	"context"
	"errors"
	"sync"
	"time"
)

// pollEvery bounds the wait between two takes of a waiting taker.
const pollEvery = 100 * time.Millisecond

// TakeWithin takes the lease, waiting at most wait while another holder
// has it. onWait, when set, is called once with that holder before
// waiting. After wait it returns the last *HeldError (ErrHeld).
func (l *Lease) TakeWithin(ctx context.Context, wait time.Duration, onWait func(Holder, time.Duration)) error {
	err := l.Take(ctx)
	var held *HeldError
	if !errors.As(err, &held) || wait <= 0 {
		return err
	}
	if onWait != nil {
		onWait(held.Holder, wait)
	}
	end := time.Now().Add(wait)
	for {
		pause := min(pollEvery, held.Holder.Left+time.Millisecond, time.Until(end))
		if pause <= 0 || !sleep(ctx, pause) {
			return err
		}
		if err = l.Take(ctx); !errors.As(err, &held) {
			return err
		}
	}
}

// Keep renews the lease every RenewEvery(TTL) until stop is called. When
// a renewal finds the lease lost, or the renew deadline passes without a
// successful renewal, it calls lost (when set) once with the reason and
// stops renewing. Each renewal is bounded by the renew deadline, so a hung
// database cannot hold it past that.
func (l *Lease) Keep(lost func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(RenewEvery(l.ttl))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := l.renewBounded(ctx); err != nil && ctx.Err() == nil {
				if lost != nil {
					lost(err)
				}
				return
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// renewBounded renews once within the renew deadline; it returns an error
// only when the lease is lost for good (ErrLost, or invalid afterwards).
func (l *Lease) renewBounded(ctx context.Context) error {
	l.mu.Lock()
	deadline := l.deadline
	l.mu.Unlock()
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := l.Renew(rctx)
	if errors.Is(err, ErrLost) {
		return err
	}
	if !l.Valid() {
		if err == nil {
			err = ErrLost
		}
		return err
	}
	return nil
}
