package projection

import "encoding/json"

// Codec (de)serialises read models and event payloads. The bytes a codec
// produces are stored as they are (the read-model topic's payload column).
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// JSON is the default codec, encoding/json: a field added to a read model
// keeps its init value (or zero) when an older document lacks it, and a
// property the type no longer has is ignored.
type JSON struct{}

// Marshal encodes v as JSON.
func (JSON) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes a JSON document into v.
func (JSON) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
