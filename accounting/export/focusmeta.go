package export

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/gpubridge/gpubridge/internal/atomicfile"
)

// FOCUS metadata (the specification's "Metadata" section): who generated
// the dataset and its schema, published beside the data as a JSON file.
const (
	// FocusVersion is the FOCUS version format=focus conforms to.
	FocusVersion = "1.2"
	// DataGenerator names what generates the dataset.
	DataGenerator = "gpubridge"
	// DataGeneratorVersion is the version of our FOCUS export logic,
	// changed with every change of its columns or of how a value is
	// computed (docs/chargeback.md lists them). 1.x wrote FOCUS 1.0
	// columns.
	DataGeneratorVersion = "2.1.0"
	// TagPrefix prefixes every tag key we write (provider-defined tags).
	TagPrefix = "gpubridge/"
)

// MetadataSuffix is appended to an export file's path for its metadata.
const MetadataSuffix = ".metadata.json"

// Metadata is the FOCUS metadata of a dataset: the Data Generator object
// and the Schema object.
type Metadata struct {
	DataGenerator DataGeneratorInfo `json:"DataGenerator"`
	Schema        Schema            `json:"Schema"`
}

// DataGeneratorInfo is the metadata's Data Generator object.
type DataGeneratorInfo struct {
	DataGenerator string `json:"DataGenerator"`
}

// Schema is the metadata's Schema object. SchemaId is a name-based UUID
// (SHA-1) of the rest of the schema (FocusVersion, DataGeneratorVersion,
// ColumnDefinition), so it changes exactly when the schema does.
type Schema struct {
	SchemaID             string             `json:"SchemaId"`
	FocusVersion         string             `json:"FocusVersion"`
	CreationDate         string             `json:"CreationDate"`
	DataGeneratorVersion string             `json:"DataGeneratorVersion"`
	ColumnDefinition     []ColumnDefinition `json:"ColumnDefinition"`
}

// ColumnDefinition describes one column of the dataset. Absent fields do
// not apply (the metadata holds no nulls).
type ColumnDefinition struct {
	ColumnName          string   `json:"ColumnName"`
	DataType            string   `json:"DataType"`
	NumericPrecision    int      `json:"NumericPrecision,omitempty"`
	NumberScale         *int     `json:"NumberScale,omitempty"`
	StringMaxLength     int      `json:"StringMaxLength,omitempty"`
	StringEncoding      string   `json:"StringEncoding,omitempty"`
	ProviderTagPrefixes []string `json:"ProviderTagPrefixes,omitempty"`
}

// schemaNamespace is the UUID namespace of our SchemaIds.
var schemaNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/gpubridge/gpubridge/focus-schema"))

// FOCUSMetadata returns the metadata of m's FOCUS export. CreationDate is
// the close time for a closed period (so its metadata, like its data, is
// the same bytes every time) and m.Now for an open one.
func FOCUSMetadata(m Meta) (Metadata, error) {
	created := m.ClosedAt
	if !m.Closed {
		if m.Now.IsZero() {
			return Metadata{}, fmt.Errorf("FOCUS metadata of open period %s: no export time (Meta.Now)", m.Period)
		}
		created = m.Now
	}
	minor := m.Card.Minor()
	defs := make([]ColumnDefinition, 0, nFocusColumns)
	for _, c := range focusColumns {
		d := ColumnDefinition{ColumnName: c.name, DataType: c.dataType, NumericPrecision: c.precision, StringMaxLength: c.maxLen}
		if c.dataType == tDecimal {
			s := c.scale
			if s == scaleMinor {
				s = minor
			}
			d.NumberScale = &s
		}
		if c.dataType == tString || c.dataType == tJSON {
			d.StringEncoding = "UTF-8"
		}
		if c.name == "Tags" {
			d.ProviderTagPrefixes = []string{TagPrefix}
		}
		defs = append(defs, d)
	}
	s := Schema{FocusVersion: FocusVersion, DataGeneratorVersion: DataGeneratorVersion, ColumnDefinition: defs}
	id, err := json.Marshal(s) // without SchemaId and CreationDate
	if err != nil {
		return Metadata{}, err
	}
	s.SchemaID = uuid.NewSHA1(schemaNamespace, id).String()
	s.CreationDate = rfc(created)
	return Metadata{DataGenerator: DataGeneratorInfo{DataGenerator}, Schema: s}, nil
}

// MarshalMetadata writes the metadata as indented JSON with a final newline.
func MarshalMetadata(md Metadata) ([]byte, error) {
	b, err := json.MarshalIndent(md, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// MetadataJSON is m's FOCUS metadata as MarshalMetadata writes it.
func MetadataJSON(m Meta) ([]byte, error) {
	md, err := FOCUSMetadata(m)
	if err != nil {
		return nil, err
	}
	return MarshalMetadata(md)
}

// WriteMetadataFile writes m's FOCUS metadata to path through
// internal/atomicfile (mode FileMode).
func WriteMetadataFile(_ context.Context, path string, m Meta) error {
	b, err := MetadataJSON(m)
	if err != nil {
		return err
	}
	_, err = atomicfile.Write(path, b, atomicfile.Options{Mode: FileMode})
	return err
}
