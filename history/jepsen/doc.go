// Package jepsen imports a Jepsen lock or mutex workload's history.edn as
// a history, so that lockcheck's checks can judge a history it did not
// record (lockcheck import jepsen). It holds the small EDN reader that
// import needs, which reads an operation at a time and bounds every
// value, so a file of any length or a hostile one costs little memory.
package jepsen
