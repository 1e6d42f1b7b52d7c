package orphans

import "testing"

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		f    Facts
		want bool
	}{
		{Facts{Cached: true}, false},
		{Facts{Live: true}, false},
		{Facts{}, true},
	} {
		if got := Decide(tc.f).Sweep; got != tc.want {
			t.Errorf("Decide(%+v).Sweep = %v, want %v", tc.f, got, tc.want)
		}
	}
}
