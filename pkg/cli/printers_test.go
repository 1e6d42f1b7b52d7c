package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	if got := ago(now.Add(-4*time.Minute), now); got != "4m ago" {
		t.Errorf("ago(4m before) = %q", got)
	}
	if got := ago(now.Add(12*time.Minute), now); got != "in 12m" {
		t.Errorf("ago(12m after) = %q", got)
	}
	if got := age(time.Time{}, now); got != "-" {
		t.Errorf("age(zero) = %q", got)
	}
}

func TestColorEnabled(t *testing.T) {
	cases := map[string]struct {
		mode     string
		terminal bool
		noColor  string
		want     bool
		wantErr  bool
	}{
		"auto on a terminal":               {mode: "auto", terminal: true, want: true},
		"auto on a terminal with NO_COLOR": {mode: "auto", terminal: true, noColor: "1"},
		"auto on a pipe":                   {mode: "auto"},
		"the default is auto":              {mode: "", terminal: true, want: true},
		"always on a pipe":                 {mode: "always", want: true},
		"always wins over NO_COLOR":        {mode: "always", noColor: "1", want: true},
		"never on a terminal":              {mode: "never", terminal: true},
		"an unknown mode is an error":      {mode: "sometimes", wantErr: true},
		"modes are spelt in lower case":    {mode: "Always", wantErr: true},
		"an empty NO_COLOR does not count": {mode: "auto", terminal: true, noColor: "", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := colorEnabled(tc.mode, tc.terminal, tc.noColor)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("colorEnabled(%q, %v, %q) = %v, %v; want %v, error %v", tc.mode, tc.terminal, tc.noColor, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestStateColouring(t *testing.T) {
	cases := map[string]struct {
		state string
		on    bool
		want  string
	}{
		"Completed in green":          {"Completed", true, "\x1b[32mCompleted\x1b[0m"},
		"NotCompleted in cyan":        {"NotCompleted", true, "\x1b[36mNotCompleted\x1b[0m"},
		"InProgress in cyan":          {"InProgress", true, "\x1b[36mInProgress\x1b[0m"},
		"TimedOut in yellow":          {"TimedOut", true, "\x1b[33mTimedOut\x1b[0m"},
		"CannotStart in yellow":       {"CannotStart", true, "\x1b[33mCannotStart\x1b[0m"},
		"Failed in red":               {"Failed", true, "\x1b[31mFailed\x1b[0m"},
		"Pending stays plain":         {"Pending", true, "Pending"},
		"NotStarted stays plain":      {"NotStarted", true, "NotStarted"},
		"nothing coloured when off":   {"Completed", false, "Completed"},
		"failed stays plain when off": {"Failed", false, "Failed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := (painter{on: tc.on}).state(tc.state); got != tc.want {
				t.Errorf("state(%q) = %q, want %q", tc.state, got, tc.want)
			}
		})
	}
}

func TestTableAlignsColouredCells(t *testing.T) {
	tbl := &table{header: []string{"CLUSTER", "STATE", "SINCE"}}
	tbl.add(plain("spoke-10"), stateCell("InProgress"), plain("4m"))
	tbl.add(plain("a"), stateCell("Completed"), plain(""))
	for _, on := range []bool{false, true} {
		var b bytes.Buffer
		if err := tbl.write(&b, painter{on: on}, "  "); err != nil {
			t.Fatal(err)
		}
		got := stripANSI(b.String())
		want := "  CLUSTER   STATE       SINCE\n  spoke-10  InProgress  4m\n  a         Completed\n"
		if got != want {
			t.Errorf("colour %v: table\n%q\nwant\n%q", on, got, want)
		}
	}
}

func stripANSI(s string) string {
	for _, code := range []string{ansiReset, ansiRed, ansiGreen, ansiYellow, ansiCyan} {
		s = strings.ReplaceAll(s, code, "")
	}
	return s
}

func TestWriteListColumns(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	items := []ranv1alpha1.ClusterGroupUpgrade{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "platform", CreationTimestamp: metav1.NewTime(now.Add(-3 * 24 * time.Hour))},
			Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateCompleted,
				Progress: ranv1alpha1.Progress{Batch: "5/5", Clusters: "100/100"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "new", CreationTimestamp: metav1.NewTime(now.Add(-45 * time.Second))}},
	}
	var b bytes.Buffer
	if err := writeList(&b, painter{}, items, true, now); err != nil {
		t.Fatal(err)
	}
	want := "NAMESPACE  NAME      STATE      BATCH  CLUSTERS  AGE\n" +
		"ztp        platform  Completed  5/5    100/100   3d\n" +
		"ztp        new       -          -      -         45s\n"
	if b.String() != want {
		t.Errorf("list:\n%s\nwant:\n%s", b.String(), want)
	}
}
