package scenarios

import (
	"fmt"
	"reflect"
	"time"
)

// Setting is one row of the table of settings (Settings): everything the
// code knows about one setting of a Scenario, so that its flag, its
// default, its check, its key in scenario.json and its place in the replay
// command line are written once and cannot drift apart. How a row is read
// and written follows from its field's type (see Args and Flagged); a
// setting that is not its field's value as text says how in Parse and
// Format.
type Setting struct {
	// Flag is lockcheck run's flag; "" when the setting has none (it is
	// set by code, or by another command's flag).
	Flag string
	// Field is the Scenario field the setting is, by name; "" for a flag
	// that another row's Parse reads.
	Field string
	// JSON is the setting's key in scenario.json with encoding/json's
	// options ("ttl,omitempty"); "" when another row writes it.
	JSON string
	// Help is the flag's usage.
	Help string
	// Default is the value a zero field takes, and the flag's default.
	// For a flag without a Field it is the flag's default alone.
	Default any
	// Derive gives a default that depends on the settings above the row
	// (TTL/5): it sets the field when zero. The flag then shows no
	// default, and its Help says what applies: "(default ...)".
	Derive func(s *Scenario)
	// Positive makes the flag refuse 0 and less: a zero field takes the
	// default, so --ttl 0 would silently run with 15s.
	Positive bool
	// Optional registers the flag without a default that a user could
	// give: its default depends on other settings (Help says which), and
	// a 0 given is refused as given.
	Optional bool
	// Check refuses a value of this setting alone that cannot run, in one
	// line; Validate runs every row's before the checks across settings.
	Check func(st Setting, s Scenario) error
	// Repeat makes the flag repeatable.
	Repeat bool
	// FromFlag turns what the flag bound to the field holds into the
	// setting, after parsing (a negative interval means None). A share's
	// needs none: its 0 means None (see Flagged).
	FromFlag func(s *Scenario)
	// Parse reads the setting from its flags' text (every occurrence, by
	// flag name) after the flags are parsed; Format gives its flags for
	// Args. Rows with a plain field leave both nil.
	Parse  func(s *Scenario, given func(flag string) []string) error
	Format func(s Scenario) []string
}

// field is the row's field in s.
func (st Setting) field(s *Scenario) reflect.Value {
	v := reflect.ValueOf(s).Elem().FieldByName(st.Field)
	if !v.IsValid() {
		panic(fmt.Sprintf("setting --%s: Scenario has no field %q", st.Flag, st.Field))
	}
	return v
}

// Ptr points at the row's field in s, typed as the field is (*string,
// *time.Duration ...): what a flag binds to.
func (st Setting) Ptr(s *Scenario) any { return st.field(s).Addr().Interface() }

// Bound says whether the row's flag is the field's value as text, bound
// to it; otherwise the flag is text that Parse reads.
func (st Setting) Bound() bool {
	return st.Field != "" && st.Parse == nil && !st.Optional
}

var durationType = reflect.TypeFor[time.Duration]()

// isDuration says whether the row's field is a time.Duration, written as
// text ("15s") in scenario.json.
func (st Setting) isDuration() bool {
	return st.Field != "" && st.field(&Scenario{}).Type() == durationType
}

// applyDefault gives a zero field the row's default.
func (st Setting) applyDefault(s *Scenario) {
	if st.Derive != nil {
		st.Derive(s)
	}
	if st.Field == "" || st.Default == nil {
		return
	}
	if f := st.field(s); f.IsZero() {
		f.Set(reflect.ValueOf(st.Default).Convert(f.Type()))
	}
}

// args are the row's flags in Args: none for a zero field, and a share
// set to None is written as the flag's "none", 0.
func (st Setting) args(s Scenario) []string {
	if st.Format != nil {
		return st.Format(s)
	}
	if st.Flag == "" || st.Field == "" {
		return nil
	}
	f := st.field(&s)
	switch {
	case f.Kind() == reflect.Float64 && f.Float() == None:
		return []string{"--" + st.Flag + "=0"}
	case f.IsZero():
		return nil
	case f.Kind() == reflect.Bool:
		return []string{"--" + st.Flag}
	}
	return []string{fmt.Sprintf("--%s=%v", st.Flag, f.Interface())}
}

// Flagged turns what a flag bound to the row's field holds into the
// setting, after parsing: FromFlag's, and a share is checked and its 0
// means None.
func (st Setting) Flagged(s *Scenario) error {
	if !st.Bound() {
		return nil
	}
	if st.FromFlag != nil {
		st.FromFlag(s)
	}
	f := st.field(s)
	if f.Kind() != reflect.Float64 {
		return nil
	}
	if v := f.Float(); v < 0 || v > 1 {
		return fmt.Errorf("--%s %g: want a share between 0 and 1", st.Flag, v)
	}
	if f.Float() == 0 {
		f.SetFloat(None)
	}
	return nil
}
