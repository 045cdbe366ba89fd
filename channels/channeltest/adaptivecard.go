package channeltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// AdaptiveCardType is the content type of an Adaptive Card attachment.
const AdaptiveCardType = "application/vnd.microsoft.card.adaptive"

// Adaptive Card elements, actions and inlines a card may hold, with the
// schema version that introduced each: a card of an older version may not
// use them.
var (
	cardElements = map[string]int{"TextBlock": 0, "Image": 0, "Container": 0, "ColumnSet": 0, "FactSet": 0,
		"ImageSet": 0, "Media": 1, "ActionSet": 2, "RichTextBlock": 2, "Table": 5}
	cardActions = map[string]int{"Action.OpenUrl": 0, "Action.Submit": 0, "Action.ShowCard": 0,
		"Action.ToggleVisibility": 2, "Action.Execute": 4}
	cardEnums = map[string][]string{
		"weight":              {"default", "lighter", "bolder"},
		"size":                {"default", "small", "medium", "large", "extralarge"},
		"color":               {"default", "dark", "light", "accent", "good", "warning", "attention"},
		"horizontalAlignment": {"left", "center", "right"},
		"spacing":             {"none", "small", "default", "medium", "large", "extralarge", "padding"},
	}
	cardVersion = regexp.MustCompile(`^1\.([0-6])$`)
	pixelWidth  = regexp.MustCompile(`^[0-9]+px$`)
)

// CheckTeamsMessage checks a body a Teams workflow would post as a card:
// {"type":"message","attachments":[{"contentType":AdaptiveCardType,
// "content":{"type":"AdaptiveCard","version":"1.x","body":[...]}}]}, every
// element, action and inline of a known type that the card's version has,
// with the properties of its type (a TextBlock's text, a FactSet's facts of
// title and value, a ColumnSet's columns of items, an Action.OpenUrl's
// absolute URL) and known values of the enumerations. It returns the first
// attachment's card.
func CheckTeamsMessage(body []byte) (map[string]any, error) {
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("the body is not a JSON object: %w", err)
	}
	if msg["type"] != "message" {
		return nil, errors.New(`type must be "message"`)
	}
	atts := list(msg["attachments"])
	if len(atts) == 0 {
		return nil, errors.New("attachments must hold a card")
	}
	var first map[string]any
	for i, a := range atts {
		a, ok := a.(map[string]any)
		if !ok || a["contentType"] != AdaptiveCardType {
			return nil, fmt.Errorf("attachments[%d]: contentType must be %s", i, AdaptiveCardType)
		}
		card, ok := a["content"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("attachments[%d]: content must be an Adaptive Card", i)
		}
		if err := checkCard(card); err != nil {
			return nil, fmt.Errorf("attachments[%d].content: %w", i, err)
		}
		if first == nil {
			first = card
		}
	}
	return first, nil
}

func checkCard(card map[string]any) error {
	if card["type"] != "AdaptiveCard" {
		return errors.New(`type must be "AdaptiveCard"`)
	}
	m := cardVersion.FindStringSubmatch(str(card["version"]))
	if m == nil {
		return fmt.Errorf("version %v is not an Adaptive Card version", card["version"])
	}
	v, _ := strconv.Atoi(m[1])
	c := cardCheck{version: v}
	if _, ok := card["body"].([]any); !ok {
		return errors.New("body must be a list of elements")
	}
	if err := c.elements("body", card["body"]); err != nil {
		return err
	}
	return c.actions("actions", card["actions"])
}

// cardCheck checks the parts of a card of version 1.version.
type cardCheck struct{ version int }

func (c cardCheck) elements(path string, v any) error {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s must be a list", path)
	}
	for i, it := range items {
		if err := c.element(fmt.Sprintf("%s[%d]", path, i), it); err != nil {
			return err
		}
	}
	return nil
}

func (c cardCheck) element(path string, v any) error {
	e, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s must be an element", path)
	}
	typ := str(e["type"])
	since, known := cardElements[typ]
	switch {
	case !known:
		return fmt.Errorf("%s: unknown element type %q", path, typ)
	case since > c.version:
		return fmt.Errorf("%s: %s needs version 1.%d, the card is 1.%d", path, typ, since, c.version)
	}
	if err := enums(path, e); err != nil {
		return err
	}
	switch typ {
	case "TextBlock":
		if _, ok := e["text"].(string); !ok {
			return fmt.Errorf("%s: a TextBlock needs a text", path)
		}
	case "RichTextBlock":
		return c.inlines(path+".inlines", e["inlines"])
	case "FactSet":
		for i, f := range list(e["facts"]) {
			f, ok := f.(map[string]any)
			if _, t := f["title"].(string); !ok || !t {
				return fmt.Errorf("%s.facts[%d]: a fact needs a title and a value", path, i)
			}
			if _, v := f["value"].(string); !v {
				return fmt.Errorf("%s.facts[%d]: a fact needs a title and a value", path, i)
			}
		}
	case "ColumnSet":
		return c.columns(path+".columns", e["columns"])
	case "Container":
		return c.elements(path+".items", e["items"])
	case "ActionSet":
		return c.actions(path+".actions", e["actions"])
	case "Image":
		if !absolute(str(e["url"])) {
			return fmt.Errorf("%s: an Image needs an absolute url", path)
		}
	}
	return nil
}

func (c cardCheck) inlines(path string, v any) error {
	items, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s must be a list", path)
	}
	for i, in := range items {
		switch in := in.(type) {
		case string:
		case map[string]any:
			if in["type"] != "TextRun" {
				return fmt.Errorf("%s[%d]: an inline must be a TextRun", path, i)
			}
			if _, ok := in["text"].(string); !ok {
				return fmt.Errorf("%s[%d]: a TextRun needs a text", path, i)
			}
			if err := enums(fmt.Sprintf("%s[%d]", path, i), in); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s[%d]: an inline must be a TextRun or a string", path, i)
		}
	}
	return nil
}

func (c cardCheck) columns(path string, v any) error {
	cols, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s must be a list", path)
	}
	for i, col := range cols {
		p := fmt.Sprintf("%s[%d]", path, i)
		col, ok := col.(map[string]any)
		if !ok || (col["type"] != nil && col["type"] != "Column") {
			return fmt.Errorf("%s must be a Column", p)
		}
		switch w := col["width"].(type) {
		case nil, float64:
		case string:
			if w != "auto" && w != "stretch" && !pixelWidth.MatchString(w) {
				return fmt.Errorf("%s: width %q is not auto, stretch, a weight or pixels", p, w)
			}
		default:
			return fmt.Errorf("%s: width must be a string or a number", p)
		}
		if err := c.elements(p+".items", col["items"]); err != nil {
			return err
		}
	}
	return nil
}

func (c cardCheck) actions(path string, v any) error {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s must be a list", path)
	}
	for i, a := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		a, ok := a.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an action", p)
		}
		typ := str(a["type"])
		since, known := cardActions[typ]
		switch {
		case !known:
			return fmt.Errorf("%s: unknown action type %q", p, typ)
		case since > c.version:
			return fmt.Errorf("%s: %s needs version 1.%d, the card is 1.%d", p, typ, since, c.version)
		case typ == "Action.OpenUrl" && !absolute(str(a["url"])):
			return fmt.Errorf("%s: an Action.OpenUrl needs an absolute url", p)
		}
	}
	return nil
}

// enums checks the enumerated properties of e.
func enums(path string, e map[string]any) error {
	for key, values := range cardEnums {
		v, ok := e[key]
		if !ok {
			continue
		}
		s, _ := v.(string)
		found := false
		for _, want := range values {
			found = found || strings.EqualFold(s, want)
		}
		if !found {
			return fmt.Errorf("%s: %s %v is none of %s", path, key, v, strings.Join(values, ", "))
		}
	}
	return nil
}

func absolute(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
