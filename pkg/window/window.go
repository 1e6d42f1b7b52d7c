// Package window decides maintenance windows: when a rollout may start a new batch. It is pure;
// the current time comes in as an argument.
//
// A window opens on each listed day (every day when none is listed) when the clock in its
// location reads its start, and stays open for its duration, into the next day or the next week
// if need be: Saturday 22:00 for 6h is open on Sunday at 03:00 even when Sunday is not listed.
// Openings are half-open: a window is open at its opening instant and closed at its closing one.
//
// Daylight saving time: the start is read on the local wall clock, the duration is elapsed time.
// On each listed day a window opens at the first instant at which the local clock reads its start
// or later:
//   - when the clocks jump over the start (02:30 on a night that goes from 02:00 straight to
//     03:00), the window opens as the clocks jump, at 03:00 new time, and lasts its full
//     duration from there;
//   - when the clocks go back over the start (01:30 happens twice), the window opens at the first
//     01:30.
//
// So a window opens exactly once on each listed day, and a window of 6h lasts 6h even when the
// clocks change inside it: Saturday 22:00 for 6h over a spring-forward night closes at 05:00 new
// time.
package window

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

const (
	// MaxDuration is the longest a window may stay open. Longer durations are treated as
	// MaxDuration.
	MaxDuration = 7 * 24 * time.Hour
	// lookahead is how far past max(now, StartAt) Next looks for openings: any valid window opens
	// at least once a week, give or take a change of the clocks.
	lookahead = 8 * 24 * time.Hour
	// lookbackDays is how many local days before an instant an opening that contains it may have
	// started: MaxDuration plus room for changes of the clocks.
	lookbackDays = 9
)

// Window is a recurring maintenance window.
type Window struct {
	// Days are the days on which the window opens; empty: every day.
	Days []time.Weekday
	// Start is when the window opens, "HH:MM", 24-hour, in Location. A window whose Start is not
	// such a time never opens.
	Start string
	// Duration is how long the window stays open; more than zero, at most MaxDuration. A window
	// with no duration never opens.
	Duration time.Duration
	// Location is where Start is read; nil: UTC.
	Location *time.Location
}

// Schedule is when new batches may start: not before StartAt (zero: no constraint), and, when
// Windows is not empty, only inside one of them.
type Schedule struct {
	StartAt time.Time
	Windows []Window
}

// span is one opening of a window, from start (included) to end (excluded).
type span struct {
	start, end time.Time
}

// Open reports whether a new batch may start at now.
func (s Schedule) Open(now time.Time) bool {
	if now.Before(s.StartAt) {
		return false
	}
	if len(s.Windows) == 0 {
		return true
	}
	for _, w := range s.Windows {
		if len(w.openings(now, now)) > 0 {
			return true
		}
	}
	return false
}

// Next returns when the schedule next opens at or after now (now itself when open) and when that
// opening closes (zero when it never closes: no windows); ok is false when it never opens
// (impossible for valid windows, but defensive). The times are in now's location.
//
// closes is the end of the union of overlapping or adjacent openings that contains opens, so it
// can be shown as "open until". Next looks at openings that start at most 8 days after
// max(now, StartAt); windows that together stay open past that (a daily window of 24h in UTC)
// report the end of the last opening seen, which is a lower bound: asking again then carries on.
func (s Schedule) Next(now time.Time) (opens, closes time.Time, ok bool) {
	from := now
	if s.StartAt.After(now) {
		from = s.StartAt
	}
	loc := now.Location()
	if len(s.Windows) == 0 {
		return from.In(loc), time.Time{}, true
	}
	var spans []span
	for _, w := range s.Windows {
		spans = append(spans, w.openings(from, from.Add(lookahead))...)
	}
	if len(spans) == 0 {
		return time.Time{}, time.Time{}, false
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	// Every span ends after from, so the earliest one holds the first open instant.
	opens = spans[0].start
	if opens.Before(from) {
		opens = from
	}
	closes = opens
	for _, sp := range spans {
		if sp.start.After(closes) {
			break
		}
		if sp.end.After(closes) {
			closes = sp.end
		}
	}
	return opens.In(loc), closes.In(loc), true
}

// openings returns the openings of w that start at or before to and end after from. It is
// meant for from and to a few days apart.
func (w Window) openings(from, to time.Time) []span {
	hour, minute, ok := clockTime(w.Start)
	if !ok || w.Duration <= 0 {
		return nil
	}
	length := min(w.Duration, MaxDuration)
	loc := w.Location
	if loc == nil {
		loc = time.UTC
	}
	startOfDay := time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute
	first := civilDate(from.In(loc)).AddDate(0, 0, -lookbackDays)
	last := civilDate(to.In(loc)).AddDate(0, 0, 1)
	var spans []span
	for day := first; !day.After(last); day = day.AddDate(0, 0, 1) {
		if !w.on(day.Weekday()) {
			continue
		}
		start := firstReading(day.Add(startOfDay), loc)
		end := start.Add(length)
		if !start.After(to) && end.After(from) {
			spans = append(spans, span{start: start, end: end})
		}
	}
	return spans
}

// on reports whether w opens on day.
func (w Window) on(day time.Weekday) bool {
	return len(w.Days) == 0 || slices.Contains(w.Days, day)
}

// civilDate returns the date t shows in its location, as midnight UTC.
func civilDate(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// reading returns what the clock in loc shows at t, as a time in UTC.
func reading(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// firstReading returns the first instant at which the clock in loc shows wall (a clock reading
// written as a time in UTC) or later: the instant itself when wall happens once, the first of
// the two when the clocks go back over it, and the instant the clocks jump when they jump over
// it.
func firstReading(wall time.Time, loc *time.Location) time.Time {
	guess := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc)
	var first time.Time
	found := false
	for _, offset := range nearbyOffsets(guess) {
		t := wall.Add(-time.Duration(offset) * time.Second)
		if reading(t, loc).Equal(wall) && (!found || t.Before(first)) {
			first, found = t, true
		}
	}
	if found {
		return first
	}
	// The clocks jump over wall; guess lies on one side of the jump.
	start, end := guess.ZoneBounds()
	jump := end
	if reading(guess, loc).After(wall) {
		jump = start
	}
	if jump.IsZero() {
		return guess
	}
	return jump
}

// nearbyOffsets returns the UTC offsets, in seconds, of the zone in effect at t and of the
// zones just before and after it.
func nearbyOffsets(t time.Time) []int {
	_, offset := t.Zone()
	offsets := []int{offset}
	start, end := t.ZoneBounds()
	if !start.IsZero() {
		_, before := start.Add(-time.Second).Zone()
		offsets = append(offsets, before)
	}
	if !end.IsZero() {
		_, after := end.Zone()
		offsets = append(offsets, after)
	}
	return offsets
}

// clockTime reads "HH:MM", 24-hour.
func clockTime(s string) (hour, minute int, ok bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, 0, false
	}
	hour, hourOK := twoDigits(s[:2])
	minute, minuteOK := twoDigits(s[3:])
	return hour, minute, hourOK && minuteOK && hour < 24 && minute < 60
}

func twoDigits(s string) (int, bool) {
	if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

var dayNames = map[string]time.Weekday{
	"monday": time.Monday, "mon": time.Monday,
	"tuesday": time.Tuesday, "tue": time.Tuesday,
	"wednesday": time.Wednesday, "wed": time.Wednesday,
	"thursday": time.Thursday, "thu": time.Thursday,
	"friday": time.Friday, "fri": time.Friday,
	"saturday": time.Saturday, "sat": time.Saturday,
	"sunday": time.Sunday, "sun": time.Sunday,
}

// Parse checks a window's fields as written in YAML and returns the Window: days are day names,
// Monday..Sunday or Mon..Sun in any case, each at most once (none: every day); start is "HH:MM",
// 24-hour; duration is a Go duration such as "4h" or "90m", more than zero and at most 7 days;
// timeZone is an IANA time zone name such as "Europe/Paris" (empty: UTC). The error names the
// first bad field and its value.
func Parse(days []string, start, duration, timeZone string) (Window, error) {
	weekdays, err := parseDays(days)
	if err != nil {
		return Window{}, err
	}
	if _, _, ok := clockTime(start); !ok {
		return Window{}, fmt.Errorf("start %q is not a time of day (HH:MM)", start)
	}
	length, err := parseDuration(duration)
	if err != nil {
		return Window{}, err
	}
	loc, err := parseTimeZone(timeZone)
	if err != nil {
		return Window{}, err
	}
	return Window{Days: weekdays, Start: start, Duration: length, Location: loc}, nil
}

func parseDays(days []string) ([]time.Weekday, error) {
	var weekdays []time.Weekday
	for _, name := range days {
		day, ok := dayNames[strings.ToLower(name)]
		if !ok {
			return nil, fmt.Errorf("day %q is not a day of the week (Monday..Sunday or Mon..Sun)", name)
		}
		if slices.Contains(weekdays, day) {
			return nil, fmt.Errorf("day %q repeats %s", name, day)
		}
		weekdays = append(weekdays, day)
	}
	return weekdays, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("duration %q is not a duration (like 4h or 90m)", s)
	case d <= 0:
		return 0, fmt.Errorf("duration %q must be more than zero", s)
	case d > MaxDuration:
		return 0, fmt.Errorf("duration %q is longer than 7 days (168h)", s)
	}
	return d, nil
}

// parseTimeZone loads an IANA time zone; "Local", the zone of whatever machine runs the
// operator, is not one.
func parseTimeZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, fmt.Errorf("time zone %q is not an IANA time zone name", name)
	}
	return loc, nil
}
