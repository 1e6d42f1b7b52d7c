package window

import (
	"fmt"
	"testing"
	"time"
)

// 2026-06-01 is a Monday; 2026-03-08 and 2026-11-01 are the Sundays on which New York's clocks
// go forward (02:00 EST to 03:00 EDT) and back (02:00 EDT to 01:00 EST).
var (
	newYork = load("America/New_York")
	kolkata = load("Asia/Kolkata")
)

func load(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// ts reads an RFC 3339 time; the offset says which side of a change of the clocks is meant.
func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// utc reads "2006-01-02 15:04" in UTC.
func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

func days(d ...time.Weekday) []time.Weekday { return d }

var (
	// saturdayNight runs past midnight into Sunday, which it does not list.
	saturdayNight = Window{Days: days(time.Saturday), Start: "22:00", Duration: 6 * time.Hour}
	// sundayNight runs past the end of the week into Monday.
	sundayNight = Window{Days: days(time.Sunday), Start: "23:00", Duration: 2 * time.Hour}
	// mondayKolkata is Monday 22:00 to Tuesday 02:00 in Kolkata: 16:30 to 20:30 UTC.
	mondayKolkata = Window{Days: days(time.Monday), Start: "22:00", Duration: 4 * time.Hour, Location: kolkata}
	// skippedStart starts at 02:30, which New York skips on 2026-03-08.
	skippedStart = Window{Days: days(time.Sunday), Start: "02:30", Duration: time.Hour, Location: newYork}
	// repeatedStart starts at 01:30, which New York goes through twice on 2026-11-01.
	repeatedStart = Window{Days: days(time.Sunday), Start: "01:30", Duration: 30 * time.Minute, Location: newYork}
	// saturdayNightNewYork spans both changes of the clocks.
	saturdayNightNewYork = Window{Days: days(time.Saturday), Start: "22:00", Duration: 6 * time.Hour, Location: newYork}
	// allDay is open all day, every day.
	allDay = Window{Start: "00:00", Duration: 24 * time.Hour}
)

func TestOpen(t *testing.T) {
	cases := map[string]struct {
		schedule Schedule
		at       time.Time
		want     bool
	}{
		"opens at its start":                   {Schedule{Windows: []Window{saturdayNight}}, utc("2026-06-06 22:00"), true},
		"closed just before its start":         {Schedule{Windows: []Window{saturdayNight}}, utc("2026-06-06 21:59"), false},
		"runs past midnight into unlisted day": {Schedule{Windows: []Window{saturdayNight}}, utc("2026-06-07 03:00"), true},
		"closed at its end":                    {Schedule{Windows: []Window{saturdayNight}}, utc("2026-06-07 04:00"), false},
		"does not open on the unlisted day":    {Schedule{Windows: []Window{saturdayNight}}, utc("2026-06-07 22:30"), false},
		"runs past the end of the week":        {Schedule{Windows: []Window{sundayNight}}, utc("2026-06-08 00:30"), true},
		"closed after the end of the week":     {Schedule{Windows: []Window{sundayNight}}, utc("2026-06-08 01:00"), false},
		"every day when no day is listed": {
			Schedule{Windows: []Window{{Start: "01:00", Duration: time.Hour}}}, utc("2026-06-03 01:30"), true,
		},
		"six days long, open on the sixth day": {
			Schedule{Windows: []Window{{Days: days(time.Monday), Start: "06:00", Duration: 144 * time.Hour}}},
			utc("2026-06-07 05:59"), true,
		},
		"six days long, closed after six days": {
			Schedule{Windows: []Window{{Days: days(time.Monday), Start: "06:00", Duration: 144 * time.Hour}}},
			utc("2026-06-07 06:00"), false,
		},
		"a week less an hour, open at its end": {
			Schedule{Windows: []Window{{Days: days(time.Wednesday), Start: "12:00", Duration: 167 * time.Hour}}},
			utc("2026-06-10 10:59"), true,
		},
		"a week less an hour, closed at its end": {
			Schedule{Windows: []Window{{Days: days(time.Wednesday), Start: "12:00", Duration: 167 * time.Hour}}},
			utc("2026-06-10 11:00"), false,
		},

		"Kolkata: opens at 16:30 UTC":       {Schedule{Windows: []Window{mondayKolkata}}, utc("2026-06-08 16:30"), true},
		"Kolkata: closed at 16:29 UTC":      {Schedule{Windows: []Window{mondayKolkata}}, utc("2026-06-08 16:29"), false},
		"Kolkata: open on Tuesday at 01:59": {Schedule{Windows: []Window{mondayKolkata}}, ts("2026-06-09T01:59:00+05:30"), true},
		"Kolkata: closed on Tuesday 02:00":  {Schedule{Windows: []Window{mondayKolkata}}, ts("2026-06-09T02:00:00+05:30"), false},
		"Kolkata: not open at 22:00 UTC":    {Schedule{Windows: []Window{mondayKolkata}}, utc("2026-06-08 22:00"), false},

		"New York: a skipped start opens as the clocks jump": {
			Schedule{Windows: []Window{skippedStart}}, ts("2026-03-08T03:00:00-04:00"), true,
		},
		"New York: closed before the clocks jump": {
			Schedule{Windows: []Window{skippedStart}}, ts("2026-03-08T01:59:59-05:00"), false,
		},
		"New York: a skipped start still lasts its duration": {
			Schedule{Windows: []Window{skippedStart}}, ts("2026-03-08T03:59:59-04:00"), true,
		},
		"New York: a skipped start closes after its duration": {
			Schedule{Windows: []Window{skippedStart}}, ts("2026-03-08T04:00:00-04:00"), false,
		},
		"New York: a week later it opens at 02:30": {
			Schedule{Windows: []Window{skippedStart}}, ts("2026-03-15T02:30:00-04:00"), true,
		},
		"New York: a week later it is closed at 02:29": {
			Schedule{Windows: []Window{skippedStart}}, ts("2026-03-15T02:29:00-04:00"), false,
		},
		"New York: elapsed duration over the spring-forward night": {
			Schedule{Windows: []Window{saturdayNightNewYork}}, ts("2026-03-08T04:59:00-04:00"), true,
		},
		"New York: closes at 05:00 after the clocks went forward": {
			Schedule{Windows: []Window{saturdayNightNewYork}}, ts("2026-03-08T05:00:00-04:00"), false,
		},
		"New York: a repeated start opens the first time": {
			Schedule{Windows: []Window{repeatedStart}}, ts("2026-11-01T01:30:00-04:00"), true,
		},
		"New York: a repeated start does not open the second time": {
			Schedule{Windows: []Window{repeatedStart}}, ts("2026-11-01T01:30:00-05:00"), false,
		},
		"New York: elapsed duration over the fall-back night": {
			Schedule{Windows: []Window{saturdayNightNewYork}}, ts("2026-11-01T02:59:00-05:00"), true,
		},
		"New York: closes at 03:00 after the clocks went back": {
			Schedule{Windows: []Window{saturdayNightNewYork}}, ts("2026-11-01T03:00:00-05:00"), false,
		},

		"several windows: open when any is": {
			Schedule{Windows: []Window{saturdayNight, mondayKolkata}}, utc("2026-06-08 17:00"), true,
		},
		"several windows: closed when none is": {
			Schedule{Windows: []Window{saturdayNight, mondayKolkata}}, utc("2026-06-08 12:00"), false,
		},

		"before StartAt, even inside a window": {
			Schedule{StartAt: utc("2026-06-06 23:00"), Windows: []Window{saturdayNight}}, utc("2026-06-06 22:30"), false,
		},
		"at StartAt inside a window": {
			Schedule{StartAt: utc("2026-06-06 23:00"), Windows: []Window{saturdayNight}}, utc("2026-06-06 23:00"), true,
		},
		"StartAt alone: closed before":           {Schedule{StartAt: utc("2026-06-06 23:00")}, utc("2026-06-06 22:59"), false},
		"StartAt alone: open at StartAt":         {Schedule{StartAt: utc("2026-06-06 23:00")}, utc("2026-06-06 23:00"), true},
		"neither StartAt nor windows: open":      {Schedule{}, utc("2026-06-06 12:00"), true},
		"a window with a bad start never opens":  {Schedule{Windows: []Window{{Start: "24:00", Duration: 24 * time.Hour}}}, utc("2026-06-06 12:00"), false},
		"a window with no duration never opens":  {Schedule{Windows: []Window{{Start: "12:00"}}}, utc("2026-06-06 12:00"), false},
		"a day that is no weekday never matches": {Schedule{Windows: []Window{{Days: days(7), Start: "12:00", Duration: time.Hour}}}, utc("2026-06-06 12:00"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.schedule.Open(tc.at); got != tc.want {
				t.Fatalf("Open(%v) = %v, want %v", tc.at, got, tc.want)
			}
			if err := checkNext(tc.schedule, tc.at); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNext(t *testing.T) {
	mondays := func(start string, d time.Duration) Window {
		return Window{Days: days(time.Monday), Start: start, Duration: d}
	}
	cases := map[string]struct {
		schedule      Schedule
		now           time.Time
		opens, closes time.Time
		ok            bool
	}{
		"open: now, until the window closes": {
			Schedule{Windows: []Window{saturdayNight}}, utc("2026-06-06 23:00"),
			utc("2026-06-06 23:00"), utc("2026-06-07 04:00"), true,
		},
		"closed at the end: next week's opening": {
			Schedule{Windows: []Window{saturdayNight}}, utc("2026-06-07 04:00"),
			utc("2026-06-13 22:00"), utc("2026-06-14 04:00"), true,
		},
		"across the end of the week": {
			Schedule{Windows: []Window{mondays("01:00", 2*time.Hour)}}, utc("2026-06-06 12:00"),
			utc("2026-06-08 01:00"), utc("2026-06-08 03:00"), true,
		},
		"the earliest of several windows": {
			Schedule{Windows: []Window{
				{Days: days(time.Wednesday), Start: "10:00", Duration: time.Hour},
				{Days: days(time.Tuesday), Start: "20:00", Duration: time.Hour},
			}},
			utc("2026-06-08 12:00"), utc("2026-06-09 20:00"), utc("2026-06-09 21:00"), true,
		},
		"overlapping and adjacent windows close together": {
			Schedule{Windows: []Window{
				mondays("06:00", time.Hour), mondays("04:30", time.Hour),
				mondays("02:30", 2*time.Hour), mondays("01:00", 2*time.Hour),
			}},
			utc("2026-06-08 00:00"), utc("2026-06-08 01:00"), utc("2026-06-08 05:30"), true,
		},
		"open inside a union of windows": {
			Schedule{Windows: []Window{
				mondays("06:00", time.Hour), mondays("04:30", time.Hour),
				mondays("02:30", 2*time.Hour), mondays("01:00", 2*time.Hour),
			}},
			utc("2026-06-08 03:00"), utc("2026-06-08 03:00"), utc("2026-06-08 05:30"), true,
		},
		"the window after a gap is not joined": {
			Schedule{Windows: []Window{mondays("06:00", time.Hour), mondays("04:30", time.Hour)}},
			utc("2026-06-08 05:30"), utc("2026-06-08 06:00"), utc("2026-06-08 07:00"), true,
		},
		"a window inside another does not cut it short": {
			Schedule{Windows: []Window{mondays("01:00", 4*time.Hour), mondays("02:00", time.Hour)}},
			utc("2026-06-08 00:00"), utc("2026-06-08 01:00"), utc("2026-06-08 05:00"), true,
		},
		"windows in different time zones join": {
			Schedule{Windows: []Window{mondayKolkata, mondays("20:30", time.Hour)}},
			utc("2026-06-08 12:00"), utc("2026-06-08 16:30"), utc("2026-06-08 21:30"), true,
		},
		"Kolkata: a half-hour offset": {
			Schedule{Windows: []Window{mondayKolkata}}, utc("2026-06-08 12:00"),
			utc("2026-06-08 16:30"), utc("2026-06-08 20:30"), true,
		},
		"New York: a skipped start opens as the clocks jump": {
			Schedule{Windows: []Window{skippedStart}}, ts("2026-03-07T12:00:00-05:00"),
			ts("2026-03-08T03:00:00-04:00"), ts("2026-03-08T04:00:00-04:00"), true,
		},
		"New York: six hours over the spring-forward night": {
			Schedule{Windows: []Window{saturdayNightNewYork}}, ts("2026-03-07T12:00:00-05:00"),
			ts("2026-03-07T22:00:00-05:00"), ts("2026-03-08T05:00:00-04:00"), true,
		},
		"New York: a repeated start opens the first time": {
			Schedule{Windows: []Window{repeatedStart}}, ts("2026-10-31T12:00:00-04:00"),
			ts("2026-11-01T01:30:00-04:00"), ts("2026-11-01T01:00:00-05:00"), true,
		},
		"New York: after a repeated start, next week": {
			Schedule{Windows: []Window{repeatedStart}}, ts("2026-11-01T01:30:00-05:00"),
			ts("2026-11-08T01:30:00-05:00"), ts("2026-11-08T02:00:00-05:00"), true,
		},
		"New York: a daily all-day window closes for the hour the clocks go back": {
			Schedule{Windows: []Window{{Start: "00:00", Duration: 24 * time.Hour, Location: newYork}}},
			ts("2026-10-31T12:00:00-04:00"), ts("2026-10-31T12:00:00-04:00"), ts("2026-11-01T23:00:00-05:00"), true,
		},
		"a window that never closes reports a lower bound 8 days out": {
			Schedule{Windows: []Window{allDay}}, utc("2026-06-08 12:00"),
			utc("2026-06-08 12:00"), utc("2026-06-17 00:00"), true,
		},

		"StartAt inside a window opens at StartAt": {
			Schedule{StartAt: utc("2026-06-06 23:00"), Windows: []Window{saturdayNight}}, utc("2026-06-01 00:00"),
			utc("2026-06-06 23:00"), utc("2026-06-07 04:00"), true,
		},
		"StartAt outside any window waits for the next": {
			Schedule{StartAt: utc("2026-06-07 12:00"), Windows: []Window{saturdayNight}}, utc("2026-06-01 00:00"),
			utc("2026-06-13 22:00"), utc("2026-06-14 04:00"), true,
		},
		"StartAt at a window's end waits for the next": {
			Schedule{StartAt: utc("2026-06-07 04:00"), Windows: []Window{saturdayNight}}, utc("2026-06-01 00:00"),
			utc("2026-06-13 22:00"), utc("2026-06-14 04:00"), true,
		},
		"StartAt in the past counts for nothing": {
			Schedule{StartAt: utc("2026-05-01 00:00"), Windows: []Window{saturdayNight}}, utc("2026-06-06 23:00"),
			utc("2026-06-06 23:00"), utc("2026-06-07 04:00"), true,
		},
		"StartAt alone opens at StartAt and never closes": {
			Schedule{StartAt: utc("2026-06-06 23:00")}, utc("2026-06-01 00:00"),
			utc("2026-06-06 23:00"), time.Time{}, true,
		},
		"StartAt alone, passed: now, never closing": {
			Schedule{StartAt: utc("2026-06-01 00:00")}, utc("2026-06-06 23:00"),
			utc("2026-06-06 23:00"), time.Time{}, true,
		},
		"nothing at all: now, never closing": {
			Schedule{}, utc("2026-06-06 23:00"), utc("2026-06-06 23:00"), time.Time{}, true,
		},
		"windows that never open": {
			Schedule{Windows: []Window{{Start: "7:00", Duration: time.Hour}, {Start: "07:00"}}}, utc("2026-06-06 23:00"),
			time.Time{}, time.Time{}, false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opens, closes, ok := tc.schedule.Next(tc.now)
			if !opens.Equal(tc.opens) || !closes.Equal(tc.closes) || ok != tc.ok {
				t.Fatalf("Next(%v) = %v, %v, %v; want %v, %v, %v", tc.now, opens, closes, ok, tc.opens, tc.closes, tc.ok)
			}
			if err := checkNext(tc.schedule, tc.now); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNextAnswersInNowsLocation(t *testing.T) {
	now := ts("2026-06-08T12:00:00+05:30").In(kolkata)
	opens, closes, _ := Schedule{Windows: []Window{saturdayNightNewYork}}.Next(now)
	if opens.Location() != kolkata || closes.Location() != kolkata {
		t.Fatalf("Next answered in %v and %v, want %v", opens.Location(), closes.Location(), kolkata)
	}
}

// TestNextAgreesWithOpen walks schedules in steps of 13 minutes over the weeks around New York's
// changes of the clocks and checks Next against Open at every step.
func TestNextAgreesWithOpen(t *testing.T) {
	schedules := map[string]Schedule{
		"Saturday night UTC":             {Windows: []Window{saturdayNight}},
		"Sunday night UTC":               {Windows: []Window{sundayNight}},
		"Monday night Kolkata":           {Windows: []Window{mondayKolkata}},
		"skipped start New York":         {Windows: []Window{skippedStart}},
		"repeated start New York":        {Windows: []Window{repeatedStart}},
		"Saturday night New York":        {Windows: []Window{saturdayNightNewYork}},
		"all day New York":               {Windows: []Window{{Start: "00:00", Duration: 24 * time.Hour, Location: newYork}}},
		"all day UTC":                    {Windows: []Window{allDay}},
		"several, in three zones":        {Windows: []Window{saturdayNight, mondayKolkata, skippedStart, repeatedStart}},
		"weekdays nine to five New York": {Windows: []Window{{Days: days(1, 2, 3, 4, 5), Start: "09:00", Duration: 8 * time.Hour, Location: newYork}}},
		"a week less an hour New York":   {Windows: []Window{{Days: days(time.Sunday), Start: "02:30", Duration: 167 * time.Hour, Location: newYork}}},
		"StartAt mid-window":             {StartAt: ts("2026-03-08T03:30:00-04:00"), Windows: []Window{skippedStart, saturdayNightNewYork}},
		"StartAt alone":                  {StartAt: utc("2026-11-01 06:30")},
		"never opens":                    {Windows: []Window{{Start: "12:00"}}},
	}
	for name, s := range schedules {
		t.Run(name, func(t *testing.T) {
			for _, from := range []time.Time{utc("2026-03-01 00:00"), utc("2026-10-25 00:00")} {
				for at := from; at.Before(from.Add(15 * 24 * time.Hour)); at = at.Add(13 * time.Minute) {
					if err := checkNext(s, at); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// checkNext checks Next(now) against Open: opens is now when open, nothing opens between now
// and opens, the schedule is open from opens until closes, and, when closes falls within the
// horizon Next looks at, closed at closes.
func checkNext(s Schedule, now time.Time) error {
	opens, closes, ok := s.Next(now)
	open := s.Open(now)
	if !ok {
		if open {
			return fmt.Errorf("open at %v, yet Next finds no opening", now)
		}
		return nil
	}
	if err := checkOpens(s, now, open, opens); err != nil {
		return err
	}
	return checkCloses(s, now, opens, closes)
}

func checkOpens(s Schedule, now time.Time, open bool, opens time.Time) error {
	switch {
	case open && !opens.Equal(now):
		return fmt.Errorf("open at %v, yet Next says it opens at %v", now, opens)
	case !open && !opens.After(now):
		return fmt.Errorf("closed at %v, yet Next says it opens at %v", now, opens)
	case !s.Open(opens):
		return fmt.Errorf("Next(%v) opens at %v, where it is closed", now, opens)
	case opens.After(now) && (s.Open(opens.Add(-time.Nanosecond)) || s.Open(now.Add(opens.Sub(now)/2))):
		return fmt.Errorf("Next(%v) opens at %v, but it is open before", now, opens)
	}
	return nil
}

func checkCloses(s Schedule, now, opens, closes time.Time) error {
	switch {
	case closes.IsZero() && len(s.Windows) > 0:
		return fmt.Errorf("Next(%v) never closes, with windows", now)
	case closes.IsZero():
		return nil
	case !closes.After(opens):
		return fmt.Errorf("Next(%v) closes at %v, not after it opens at %v", now, closes, opens)
	case !s.Open(closes.Add(-time.Nanosecond)) || !s.Open(opens.Add(closes.Sub(opens)/2)):
		return fmt.Errorf("Next(%v) is open from %v to %v, but closed in between", now, opens, closes)
	}
	horizon := now
	if s.StartAt.After(now) {
		horizon = s.StartAt
	}
	if closes.Before(horizon.Add(lookahead)) && s.Open(closes) {
		return fmt.Errorf("Next(%v) closes at %v, where it is open", now, closes)
	}
	return nil
}

func TestParse(t *testing.T) {
	cases := map[string]struct {
		days                      []string
		start, duration, timeZone string
		want                      Window
	}{
		"full and short names in any case": {
			[]string{"monday", "SAT", "Sun"}, "22:00", "6h", "America/New_York",
			Window{Days: days(time.Monday, time.Saturday, time.Sunday), Start: "22:00", Duration: 6 * time.Hour, Location: newYork},
		},
		"every day, UTC by default": {
			nil, "00:00", "90m", "",
			Window{Start: "00:00", Duration: 90 * time.Minute, Location: time.UTC},
		},
		"a half-hour zone": {
			[]string{"Tuesday", "thu"}, "23:59", "1h30m", "Asia/Kolkata",
			Window{Days: days(time.Tuesday, time.Thursday), Start: "23:59", Duration: 90 * time.Minute, Location: kolkata},
		},
		"a whole week": {
			[]string{"Wed"}, "12:00", "168h", "UTC",
			Window{Days: days(time.Wednesday), Start: "12:00", Duration: MaxDuration, Location: time.UTC},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.days, tc.start, tc.duration, tc.timeZone)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if fmt.Sprint(got.Days) != fmt.Sprint(tc.want.Days) || got.Start != tc.want.Start ||
				got.Duration != tc.want.Duration || got.Location.String() != tc.want.Location.String() {
				t.Fatalf("Parse = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct {
		days                      []string
		start, duration, timeZone string
		want                      string
	}{
		"unknown day":           {[]string{"Mon", "Funday"}, "22:00", "4h", "UTC", `day "Funday" is not a day of the week (Monday..Sunday or Mon..Sun)`},
		"four-letter day":       {[]string{"Tues"}, "22:00", "4h", "UTC", `day "Tues" is not a day of the week (Monday..Sunday or Mon..Sun)`},
		"empty day":             {[]string{""}, "22:00", "4h", "UTC", `day "" is not a day of the week (Monday..Sunday or Mon..Sun)`},
		"padded day":            {[]string{" Mon"}, "22:00", "4h", "UTC", `day " Mon" is not a day of the week (Monday..Sunday or Mon..Sun)`},
		"repeated day":          {[]string{"Mon", "Fri", "monday"}, "22:00", "4h", "UTC", `day "monday" repeats Monday`},
		"hour past the day":     {nil, "25:00", "4h", "UTC", `start "25:00" is not a time of day (HH:MM)`},
		"midnight as 24:00":     {nil, "24:00", "4h", "UTC", `start "24:00" is not a time of day (HH:MM)`},
		"minute past the hour":  {nil, "12:60", "4h", "UTC", `start "12:60" is not a time of day (HH:MM)`},
		"one-digit hour":        {nil, "9:00", "4h", "UTC", `start "9:00" is not a time of day (HH:MM)`},
		"seconds":               {nil, "09:00:00", "4h", "UTC", `start "09:00:00" is not a time of day (HH:MM)`},
		"twelve-hour clock":     {nil, "10pm", "4h", "UTC", `start "10pm" is not a time of day (HH:MM)`},
		"no start":              {nil, "", "4h", "UTC", `start "" is not a time of day (HH:MM)`},
		"duration without unit": {nil, "22:00", "4", "UTC", `duration "4" is not a duration (like 4h or 90m)`},
		"duration in days":      {nil, "22:00", "1d", "UTC", `duration "1d" is not a duration (like 4h or 90m)`},
		"no duration":           {nil, "22:00", "", "UTC", `duration "" is not a duration (like 4h or 90m)`},
		"zero duration":         {nil, "22:00", "0s", "UTC", `duration "0s" must be more than zero`},
		"negative duration":     {nil, "22:00", "-1h", "UTC", `duration "-1h" must be more than zero`},
		"longer than a week":    {nil, "22:00", "168h1m", "UTC", `duration "168h1m" is longer than 7 days (168h)`},
		"unknown time zone":     {nil, "22:00", "4h", "Mars/Olympus_Mons", `time zone "Mars/Olympus_Mons" is not an IANA time zone name`},
		"offset, not a zone":    {nil, "22:00", "4h", "+05:30", `time zone "+05:30" is not an IANA time zone name`},
		"the machine's zone":    {nil, "22:00", "4h", "Local", `time zone "Local" is not an IANA time zone name`},
		"a path":                {nil, "22:00", "4h", "../../etc/passwd", `time zone "../../etc/passwd" is not an IANA time zone name`},
		"the first bad field":   {[]string{"Someday"}, "25:00", "0s", "Nowhere", `day "Someday" is not a day of the week (Monday..Sunday or Mon..Sun)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(tc.days, tc.start, tc.duration, tc.timeZone)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Parse error = %v, want %s", err, tc.want)
			}
		})
	}
}
