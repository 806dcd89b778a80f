// Package historyjson reads back the JSON files a run writes: history.json
// in any layout JSON allows, an operation at a time (Reader, Load, Scan);
// the stream a killed run left behind (LoadStream); and the run folder's
// small JSON files (ReadJSONFile), whose errors name a line and column
// instead of a byte offset. A history of millions of operations is read in
// one pass in the memory of its head and one operation, which
// encoding/json cannot do, so the lexer and the operation's decoder are
// written by hand and held by fuzz tests to what encoding/json accepts.
//
// The writing side stays in package history, beside the Recorder that
// streams every operation as it returns; this package imports history,
// never the reverse.
package historyjson
