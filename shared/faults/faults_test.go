package faults

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCheckWithoutInjector(t *testing.T) {
	if err := Check(context.Background(), nil, CreateSnapshot, nil); err != nil {
		t.Fatalf("nil injector: %v", err)
	}
}

func TestJoinAsksInOrderAndStopsAtAFault(t *testing.T) {
	var asked []string
	boom := errors.New("boom")
	rec := func(name string, fail bool) Injector {
		return Func(func(_ context.Context, at Point, subject any) error {
			asked = append(asked, name+":"+string(at)+":"+subject.(string))
			if fail {
				return boom
			}
			return nil
		})
	}
	inj := Join(rec("a", false), nil, rec("b", true), rec("c", false))
	if err := inj.Fault(context.Background(), StatusWrite, "x"); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if want := "a:status.write:x b:status.write:x"; strings.Join(asked, " ") != want {
		t.Fatalf("asked %q, want %q", strings.Join(asked, " "), want)
	}
}
