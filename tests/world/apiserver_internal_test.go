package world

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

func TestStopKilled(t *testing.T) {
	calls := 0
	raced := func() error {
		calls++
		if calls < 3 {
			return fmt.Errorf("unable to signal: %w", os.ErrProcessDone)
		}
		return nil
	}
	if err := stopKilled(raced); err != nil || calls != 3 {
		t.Fatalf("stopKilled = %v after %d calls; want nil after 3 (the exit seen on the third)", err, calls)
	}
	other := errors.New("timeout waiting for process to stop")
	if err := stopKilled(func() error { return other }); !errors.Is(err, other) {
		t.Fatalf("stopKilled = %v; want the other error as it is", err)
	}
}
