// Package pool runs a list of independent jobs a few at a time, stopping
// the rest at the first failure.
package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Run calls do(ctx, i) for each job i of order (nil: 0 to count-1), at
// most workers at once. The first error cancels ctx for the jobs running
// and stops those not started. Run returns the error of the first job, in
// index order, that failed on its own; else, when jobs were stopped (by
// that cancellation or the caller's), the first cancellation; else nil.
func Run(ctx context.Context, workers, count int, order []int, do func(ctx context.Context, i int) error) error {
	if order == nil {
		order = make([]int, count)
		for i := range order {
			order[i] = i
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		errs = make([]error, count)
		ran  = make([]bool, count)
		next = make(chan int)
		wg   sync.WaitGroup
	)
	for range min(max(workers, 1), count) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					continue // handed over as the stop came: not started
				}
				ran[i] = true
				if errs[i] = do(ctx, i); errs[i] != nil {
					cancel()
				}
			}
		})
	}
	for _, i := range order {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	var stopped error
	for i, err := range errs {
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			return err
		case err != nil && stopped == nil:
			stopped = err
		case !ran[i] && stopped == nil:
			stopped = fmt.Errorf("job %d not run: %w", i, ctx.Err())
		}
	}
	return stopped
}
