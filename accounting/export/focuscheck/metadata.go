package focuscheck

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// metadata is what the row checks need of the dataset's FOCUS metadata.
type metadata struct {
	tagPrefixes []string
	scale       map[string]int // ColumnName -> NumberScale
	precision   map[string]int // ColumnName -> NumericPrecision
	maxLen      map[string]int // ColumnName -> StringMaxLength
}

var guid = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// metadata checks the metadata (specification/metadata/) against its rules
// and against the dataset's header; nil when there is none to use.
func (c *checker) metadata() *metadata {
	if c.o.Metadata == nil {
		c.add(Should, "metadata: FOCUS Metadata SHOULD be provided (a file beside the data)", 0, "", "", "")
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(c.o.Metadata))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		c.add(Must, "metadata: accessible programmatically (a JSON object)", 0, "", "", err.Error())
		return nil
	}
	m := &metadata{scale: map[string]int{}, precision: map[string]int{}, maxLen: map[string]int{}}
	c.dataGenerator(root)
	schema := c.schema(root)
	defs, ok := schema["ColumnDefinition"].([]any)
	if !ok {
		c.add(Must, "column_definition: ColumnDefinition MUST be present in the schema", 0, "ColumnDefinition", "", "")
		return m
	}
	var names []string
	for _, d := range defs {
		if name, ok := c.columnDefinition(d, m); ok {
			names = append(names, name)
		}
	}
	// The schema matches the data it describes.
	a, b := slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(c.head))
	if !slices.Equal(a, b) {
		c.add(Must, "schema: the schema metadata MUST match the schema of the FOCUS data artifact (its columns)", 0, "ColumnDefinition", "",
			"metadata "+strings.Join(names, ",")+" vs data "+strings.Join(c.head, ","))
	}
	return m
}

// dataGenerator checks the Data Generator: an object without nulls
// holding DataGenerator (or DataGenerator at the top).
func (c *checker) dataGenerator(root map[string]any) {
	dg := root["DataGenerator"]
	if obj, ok := dg.(map[string]any); ok {
		dg = obj["DataGenerator"]
		c.noNulls("data_generator: the Data Generator metadata MUST NOT contain null values", obj)
	}
	if s, ok := dg.(string); !ok || s == "" {
		c.add(Must, "datagenerator: DataGenerator MUST be provided, a String, not null", 0, "DataGenerator", "", "")
	}
}

// schema checks the schema (Schema, or the top object) without nulls:
// SchemaId, FocusVersion, CreationDate and DataGeneratorVersion. It
// returns the schema, for its ColumnDefinition.
func (c *checker) schema(root map[string]any) map[string]any {
	schema := root
	if obj, ok := root["Schema"].(map[string]any); ok {
		schema = obj
	}
	c.noNulls("schema: the schema metadata MUST NOT contain null values", schema)
	if s, ok := schema["SchemaId"].(string); !ok || s == "" {
		c.add(Must, "schemaid: SchemaId MUST be present, a String", 0, "SchemaId", "", "")
	} else if !guid.MatchString(s) {
		c.add(Should, "schemaid: SchemaId is RECOMMENDED to be a GUID", 0, "SchemaId", s, "")
	}
	if v, ok := schema["FocusVersion"].(string); !ok || !slices.Contains(versions, v) {
		c.add(Must, "focusversion: FocusVersion MUST match a published FOCUS version", 0, "FocusVersion", "", "")
	} else if v != c.o.Version {
		c.add(Must, "focusversion: FocusVersion MUST match the version the dataset conforms to", 0, "FocusVersion", v, "want "+c.o.Version)
	}
	if v, ok := schema["CreationDate"].(string); !ok || !dateTime.MatchString(v) {
		c.add(Must, "creationdate: CreationDate MUST be present, in the Date/Time Format", 0, "CreationDate", "", "")
	}
	if v, ok := schema["DataGeneratorVersion"]; ok {
		if s, ok := v.(string); !ok || s == "" {
			c.add(Must, "datageneratorversion: DataGeneratorVersion is a String, not null", 0, "DataGeneratorVersion", "", "")
		}
	}
	return schema
}

// columnDefinition checks one column definition and keeps what the row
// checks need of it in m; it returns the column's name, or false when the
// definition names no column.
func (c *checker) columnDefinition(d any, m *metadata) (string, bool) {
	obj, ok := d.(map[string]any)
	if !ok {
		c.add(Must, "column_definition: each column definition is an Object", 0, "ColumnDefinition", "", "")
		return "", false
	}
	name, ok := obj["ColumnName"].(string)
	if !ok || name == "" {
		c.add(Must, "columnname: ColumnName MUST be provided, a String", 0, "ColumnDefinition", "", "")
		return "", false
	}
	if s, ok := obj["DataType"].(string); !ok || s == "" {
		c.add(Must, "datatype: DataType MUST be provided, a String", 0, name, "", "")
	}
	c.columnProperties(name, obj, m)
	if name == "Tags" {
		c.tagPrefixes(name, obj, m)
	}
	c.columnRecommendations(name, m)
	return name, true
}

// columnProperties checks the types of a column's optional properties and
// keeps its NumberScale, NumericPrecision and StringMaxLength in m.
func (c *checker) columnProperties(name string, obj map[string]any, m *metadata) {
	for key, dst := range map[string]map[string]int{"NumberScale": m.scale, "NumericPrecision": m.precision, "StringMaxLength": m.maxLen} {
		v, present := obj[key]
		if !present {
			continue
		}
		n, ok := integer(v)
		if !ok {
			c.add(Must, strings.ToLower(key)+": "+key+" MUST be of type Integer", 0, name, "", "")
			continue
		}
		dst[name] = n
	}
	if v, present := obj["Deprecated"]; present {
		if _, ok := v.(bool); !ok {
			c.add(Must, "deprecated: Deprecated MUST be of type Boolean", 0, name, "", "")
		}
	}
	if v, present := obj["StringEncoding"]; present {
		if _, ok := v.(string); !ok {
			c.add(Must, "stringencoding: StringEncoding MUST be of type String", 0, name, "", "")
		}
	}
}

// tagPrefixes checks the Tags column's ProviderTagPrefixes (an Array of
// Strings) and keeps them in m.
func (c *checker) tagPrefixes(name string, obj map[string]any, m *metadata) {
	arr, ok := obj["ProviderTagPrefixes"].([]any)
	if !ok {
		c.add(Must, "providertagprefixes: ProviderTagPrefixes MUST be provided for Tags, an Array of Strings", 0, name, "", "")
	}
	m.tagPrefixes = []string{}
	for _, p := range arr {
		s, ok := p.(string)
		if !ok {
			c.add(Must, "providertagprefixes: ProviderTagPrefixes is an Array of Strings", 0, name, "", "")
			continue
		}
		m.tagPrefixes = append(m.tagPrefixes, s)
	}
}

// columnRecommendations checks the properties a FOCUS column SHOULD have
// for its type (custom x_ columns have none): NumberScale and
// NumericPrecision for a Decimal, StringMaxLength for a String.
func (c *checker) columnRecommendations(name string, m *metadata) {
	typ := columnTypes[name]
	if strings.HasPrefix(name, "x_") {
		typ = "" // custom: the SHOULDs below are about FOCUS columns
	}
	if _, ok := m.scale[name]; typ == "Decimal" && !ok {
		c.add(Should, "numberscale: NumberScale SHOULD be provided for Decimal columns", 0, name, "", "")
	}
	if _, ok := m.precision[name]; typ == "Decimal" && !ok {
		c.add(Should, "numericprecision: NumericPrecision SHOULD be provided for Numeric Format columns", 0, name, "", "")
	}
	if _, ok := m.maxLen[name]; typ == "String" && !ok {
		level, rule := Should, "stringmaxlength: StringMaxLength SHOULD be provided for String columns"
		if name == "ChargeDescription" {
			rule = "chargedescription: its maximum length SHOULD be provided in the metadata (StringMaxLength)"
		}
		c.add(level, rule, 0, name, "", "")
	}
}

// values checks one row against what the metadata declares.
func (m *metadata) values(c *checker, n int, r Row) {
	for name, i := range r.idx {
		v := r.rec[i]
		if v == "" {
			continue
		}
		if s, ok := m.scale[name]; ok && numeric.MatchString(v) {
			mant, _, _ := strings.Cut(v, "E")
			_, frac, _ := strings.Cut(mant, ".")
			if len(frac) > s {
				c.add(Must, "numberscale: a value has at most NumberScale digits after the decimal point", n, name, v, "")
			}
		}
		if p, ok := m.precision[name]; ok && numeric.MatchString(v) {
			mant, _, _ := strings.Cut(v, "E")
			digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(mant), "0")
			if len(digits) > p {
				c.add(Must, "numericprecision: a value has at most NumericPrecision digits", n, name, v, "")
			}
		}
		if l, ok := m.maxLen[name]; ok && len(v) > l {
			c.add(Must, "stringmaxlength: a value is at most StringMaxLength long", n, name, v, "")
		}
	}
}

// noNulls reports null values anywhere in v.
func (c *checker) noNulls(rule string, v any) {
	switch x := v.(type) {
	case nil:
		c.add(Must, rule, 0, "", "", "")
	case map[string]any:
		for _, e := range x {
			c.noNulls(rule, e)
		}
	case []any:
		for _, e := range x {
			c.noNulls(rule, e)
		}
	}
}

func integer(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return int(i), err == nil
}
