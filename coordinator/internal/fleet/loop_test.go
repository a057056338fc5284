package fleet

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestRun: the steps run at once, in order, on a kick and on a change, and
// the loop ends with its context.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var order []string
	var n atomic.Int64
	stepped := make(chan struct{}, 10)
	changed := make(chan struct{})
	kick := make(chan struct{}, 1)
	first := func(context.Context) int { order = append(order, "first"); return 0 }
	second := func(context.Context) int { order = append(order, "second"); n.Add(1); stepped <- struct{}{}; return 0 }
	done := make(chan struct{})
	var rounds atomic.Int64
	go func() {
		defer close(done)
		Run(ctx, time.Hour, func() <-chan struct{} {
			if rounds.Add(1) == 2 {
				return changed
			}
			return make(chan struct{})
		}, kick, first, second)
	}()
	<-stepped // at once
	kick <- struct{}{}
	<-stepped // on the kick
	close(changed)
	<-stepped // on the change asked for in the second round
	cancel()
	<-done
	if n.Load() != 3 {
		t.Fatalf("%d rounds, want 3", n.Load())
	}
	for i := 0; i < len(order); i += 2 {
		if order[i] != "first" || order[i+1] != "second" {
			t.Fatalf("order %v", order)
		}
	}
}
