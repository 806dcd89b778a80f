package history

import _ "embed"

// Schema is history.schema.json: the JSON Schema (draft 2020-12) of
// history.json at this build's Format, with what each member means, for
// a tool that writes histories for lockcheck check to read. The tests
// validate the histories lockcheck writes and its saved ones against it,
// and keep its members in step with the types here.
//
//go:embed history.schema.json
var Schema []byte
