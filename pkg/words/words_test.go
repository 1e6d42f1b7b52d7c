package words

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	cases := map[string]struct {
		in   time.Duration
		want string
	}{
		"negative counts as zero":      {-time.Minute, "0s"},
		"zero":                         {0, "0s"},
		"seconds":                      {45 * time.Second, "45s"},
		"a second short of a minute":   {59*time.Second + 999*time.Millisecond, "59s"},
		"minutes, seconds dropped":     {4*time.Minute + 30*time.Second, "4m"},
		"whole hours":                  {4 * time.Hour, "4h"},
		"hours and minutes":            {2*time.Hour + 5*time.Minute + 59*time.Second, "2h5m"},
		"whole days":                   {3 * 24 * time.Hour, "3d"},
		"days and hours":               {30 * time.Hour, "1d6h"},
		"ten days and more: days only": {12*24*time.Hour + 5*time.Hour, "12d"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Duration(tc.in); got != tc.want {
				t.Errorf("Duration(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestPlural(t *testing.T) {
	for in, want := range map[int]string{0: "0 batches", 1: "1 batch", 4: "4 batches"} {
		if got := Plural(in, "batch"); got != want {
			t.Errorf("Plural(%d, batch) = %q, want %q", in, got, want)
		}
	}
	if got := Plural(2, "cluster"); got != "2 clusters" {
		t.Errorf("Plural(2, cluster) = %q", got)
	}
}
