package testenv

import (
	"strings"
	"testing"
)

func TestTailKeepsTheLastBytes(t *testing.T) {
	tail := NewTail(10)
	for _, s := range []string{"abc", "defgh", "ijklmnop", "q"} {
		n, err := tail.Write([]byte(s))
		if err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got, want := tail.String(), "hijklmnopq"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	long := strings.Repeat("x", 25) + "0123456789"
	_, _ = tail.Write([]byte(long))
	if got, want := tail.String(), "0123456789"; got != want {
		t.Errorf("after a write longer than the tail, kept %q, want %q", got, want)
	}
	if c := cap(tail.kept); c > 64 {
		t.Errorf("the buffer grew to %d bytes for a tail of 10", c)
	}
}
