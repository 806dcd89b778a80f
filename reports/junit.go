package reports

import (
	"encoding/xml"
	"fmt"
	"os"
)

// JUnit is a JUnit XML report: one suite per run, one case per check, as
// CI services read it.
type JUnit struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Errors  int          `xml:"errors,attr"`
	Skipped int          `xml:"skipped,attr"`
	Suites  []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one run.
type JUnitSuite struct {
	Name    string      `xml:"name,attr"`
	Tests   int         `xml:"tests,attr"`
	Fails   int         `xml:"failures,attr"`
	Errors  int         `xml:"errors,attr"`
	Skipped int         `xml:"skipped,attr"`
	Time    float64     `xml:"time,attr"`
	Cases   []JUnitCase `xml:"testcase"`
}

// JUnitCase is one check. A failed check is a failure; an undecided one
// (unknown) is an error, never a pass; a skipped one is skipped.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *JUnitMessage `xml:"failure,omitempty"`
	Error     *JUnitMessage `xml:"error,omitempty"`
	Skipped   *JUnitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitMessage is a failure, error or skip reason.
type JUnitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// Add appends a suite and updates the totals.
func (j *JUnit) Add(s JUnitSuite) {
	for _, c := range s.Cases {
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Fails++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	j.Tests += s.Tests
	j.Fails += s.Fails
	j.Errors += s.Errors
	j.Skipped += s.Skipped
	j.Suites = append(j.Suites, s)
}

// Write saves the report.
func (j *JUnit) Write(path string) error {
	b, err := xml.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("encode junit: %w", err)
	}
	if err := os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}
