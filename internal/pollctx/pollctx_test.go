package pollctx

import (
	"context"
	"errors"
	"testing"
)

func TestCtx(t *testing.T) {
	c := New(3)
	for i := 1; i <= 4; i++ {
		err := c.Err()
		if want := i >= 3; errors.Is(err, context.Canceled) != want {
			t.Fatalf("poll %d: %v", i, err)
		}
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after the cancelling poll")
	}
	if c.Polls() != 4 {
		t.Fatalf("%d polls, want 4", c.Polls())
	}
	u := Unarmed(1)
	if u.Err() != nil || u.Polls() != 0 {
		t.Fatal("an unarmed context ended or counted")
	}
	u.Arm()
	if !errors.Is(u.Err(), context.Canceled) {
		t.Fatal("armed at 1: not ended at the first poll")
	}
	if New(0).Err() != nil {
		t.Fatal("cancelAt 0 ended")
	}
}
