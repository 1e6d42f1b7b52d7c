package window

import (
	"strings"
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics, and that whatever it accepts is a window within
// bounds that opens within the week.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct{ days, start, duration, timeZone string }{
		{"Mon,Sat,sunday", "22:00", "6h", "America/New_York"},
		{"", "00:00", "90m", ""},
		{"tue", "02:30", "1h30m", "Asia/Kolkata"},
		{"Wed", "23:59", "168h", "UTC"},
		{"Funday", "25:00", "0s", "Mars/Olympus_Mons"},
		{"Mon,monday", "9:00", "-1h", "Local"},
		{"Fri", "12:00", "168h0m0.000000001s", "../etc/passwd"},
		{"Thu", "1a:00", "1d", "+05:30"},
		{"Sun", "24:00", "9223372036854775807ns", "Pacific/Apia"},
	} {
		f.Add(seed.days, seed.start, seed.duration, seed.timeZone)
	}
	now := time.Date(2026, time.March, 7, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, days, start, duration, timeZone string) {
		var names []string
		if days != "" {
			names = strings.Split(days, ",")
		}
		w, err := Parse(names, start, duration, timeZone)
		if err != nil {
			if w.Location != nil || w.Duration != 0 || w.Start != "" || w.Days != nil {
				t.Fatalf("Parse failed with %v but returned %+v", err, w)
			}
			return
		}
		if w.Duration <= 0 || w.Duration > MaxDuration || w.Location == nil || len(w.Days) != len(names) {
			t.Fatalf("Parse(%q, %q, %q, %q) = %+v, out of bounds", names, start, duration, timeZone, w)
		}
		s := Schedule{Windows: []Window{w}}
		opens, _, ok := s.Next(now)
		if !ok || opens.Sub(now) > lookahead || !s.Open(opens) {
			t.Fatalf("Parse(%q, %q, %q, %q) = %+v, which does not open within a week of %v: %v, %v",
				names, start, duration, timeZone, w, now, opens, ok)
		}
	})
}

// fuzzZones are time zones with odd clocks: half and three-quarter hour offsets, half-hour
// changes, a change at midnight, and a day skipped altogether (Apia, 2011-12-30).
var fuzzZones = []*time.Location{
	time.UTC,
	newYork,
	kolkata,
	load("Asia/Kathmandu"),
	load("Australia/Lord_Howe"),
	load("America/Sao_Paulo"),
	load("Pacific/Apia"),
	load("Europe/London"),
}

// fuzzBases are instants near changes of the clocks in fuzzZones.
var fuzzBases = []time.Time{
	utc("2026-03-08 07:00"), // New York forward
	utc("2026-11-01 06:00"), // New York back
	utc("2026-04-04 15:00"), // Lord Howe back half an hour
	utc("2018-11-04 03:00"), // Sao Paulo forward at midnight
	utc("2011-12-30 10:00"), // Apia skips a day
	utc("2026-03-29 01:00"), // London forward
}

// fuzzWindow builds a window from fuzzed numbers.
func fuzzWindow(dayMask uint8, startMinute uint16, durationMinutes uint32, zone uint8) Window {
	var weekdays []time.Weekday
	for d := time.Sunday; d <= time.Saturday; d++ {
		if dayMask&(1<<d) != 0 {
			weekdays = append(weekdays, d)
		}
	}
	minute := int(startMinute) % (24 * 60)
	return Window{
		Days:     weekdays,
		Start:    time.Date(0, 1, 1, minute/60, minute%60, 0, 0, time.UTC).Format("15:04"),
		Duration: time.Duration(durationMinutes%(7*24*60+1)) * time.Minute,
		Location: fuzzZones[int(zone)%len(fuzzZones)],
	}
}

// FuzzNext checks Next against Open for one or two windows and a StartAt around changes of
// the clocks: see checkNext.
func FuzzNext(f *testing.F) {
	f.Add(uint8(0), int32(0), int32(-1), uint8(1<<time.Sunday), uint16(150), uint32(60), uint8(1),
		uint8(0), uint16(0), uint32(0), uint8(0))
	f.Add(uint8(1), int32(-600), int32(30), uint8(1<<time.Sunday), uint16(90), uint32(30), uint8(1),
		uint8(1<<time.Saturday), uint16(22*60), uint32(360), uint8(1))
	f.Add(uint8(4), int32(100), int32(-1), uint8(0xff), uint16(0), uint32(24*60), uint8(6),
		uint8(1<<time.Friday), uint16(600), uint32(60), uint8(6))
	f.Add(uint8(3), int32(5), int32(1000), uint8(0), uint16(0), uint32(24*60), uint8(5),
		uint8(0x7f), uint16(23*60), uint32(7*24*60), uint8(4))
	f.Fuzz(func(t *testing.T, base uint8, nowMinutes, startAtMinutes int32,
		mask1 uint8, start1 uint16, duration1 uint32, zone1 uint8,
		mask2 uint8, start2 uint16, duration2 uint32, zone2 uint8,
	) {
		const month = 31 * 24 * 60
		now := fuzzBases[int(base)%len(fuzzBases)].Add(time.Duration(nowMinutes%month) * time.Minute)
		var s Schedule
		if startAtMinutes >= 0 {
			s.StartAt = now.Add(time.Duration(startAtMinutes%month) * time.Minute)
		}
		if duration1 != 0 {
			s.Windows = append(s.Windows, fuzzWindow(mask1, start1, duration1, zone1))
		}
		if duration2 != 0 {
			s.Windows = append(s.Windows, fuzzWindow(mask2, start2, duration2, zone2))
		}
		if err := checkNext(s, now); err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
	})
}
