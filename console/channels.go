package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/wire"
)

func channelsPath(uid string) string { return "/svc/account/profile/" + uid + "/channelConfigurations" }

// channelsOf lists the user's channels.
func (c *Console) channelsOf(q *req) ([]wire.Channel, error) {
	var out wire.ChannelList
	if _, err := q.do(q.ctx, http.MethodGet, channelsPath(q.user), nil, &out); err != nil {
		return nil, err
	}
	chs := make([]wire.Channel, 0, len(out.ChannelConfigurations.Items))
	for _, it := range out.ChannelConfigurations.Items {
		if it.ChannelConfiguration != nil {
			chs = append(chs, *it.ChannelConfiguration)
		}
	}
	return chs, nil
}

// kindOf is the descriptor of a channel's kind and its configuration.
func (c *Console) kindOf(ch wire.Channel) (*channels.Descriptor, map[string]any) {
	for key := range ch.Configuration {
		if d, ok := c.opt.Kinds.ByWire(key); ok {
			return d, configOf(ch, key)
		}
	}
	return nil, nil
}

func (c *Console) kindTitle(ch wire.Channel) string {
	if d, _ := c.kindOf(ch); d != nil {
		return d.Title
	}
	return ""
}

// channelRow is a channel in the list; Verification is "unverified" when
// its recipient has yet to accept its messages.
type channelRow struct {
	ID, Title, Kind, To, Verification string
}

func (c *Console) channelList(w http.ResponseWriter, q *req) error {
	chs, err := c.channelsOf(q)
	if err != nil {
		return err
	}
	rows := make([]channelRow, 0, len(chs))
	for _, ch := range chs {
		d, conf := c.kindOf(ch)
		r := channelRow{ID: chanID(ch), Title: titleOf(ch.Meta), Verification: ch.Verification}
		if d != nil {
			r.Kind = d.Title
			r.To = recipient(d, conf)
		}
		rows = append(rows, r)
	}
	msg := notice(q)
	if q.r.URL.Query().Get("notice") == "channelSaved" {
		for _, r := range rows {
			if r.ID == q.r.URL.Query().Get("channel") {
				msg = "Saved “" + r.Title + "”."
				if r.Verification == "unverified" {
					msg += " It sends once its recipient accepts the confirmation message."
				}
			}
		}
	}
	c.render(w, q, http.StatusOK, "channels", map[string]any{"Title": "Channels", "Rows": rows, "Notice": msg})
	return nil
}

// recipient says where a channel of kind d with the shown configuration
// conf sends: its recipient field, or, when that field is the write-only
// secret (a URL that carries its signature), what the kind shows of it.
func recipient(d *channels.Descriptor, conf map[string]any) string {
	if len(d.Fields) == 0 {
		return ""
	}
	if key := recipientKey(d); key != d.Secret {
		if v, ok := conf[key]; ok {
			return fmt.Sprint(v)
		}
		return ""
	}
	raw, err := json.Marshal(conf)
	if err != nil {
		return ""
	}
	return d.Recipient(raw)
}

// recipientKey is the field that says where a kind sends: "to" when it has one.
func recipientKey(d *channels.Descriptor) string {
	for _, f := range d.Fields {
		if f.Key == "to" || f.Key == "url" || f.Key == "channel" {
			return f.Key
		}
	}
	return d.Fields[0].Key
}

// chanForm is the channel form.
type chanForm struct {
	New          bool
	ID           string
	Title        string
	Kind         string // the wire key
	Kinds        []kindForm
	Errors       map[string]string
	Error        string
	Verification string // "verified", "unverified", or "" when recipients are not verified
	To           string // where it sends, for the verification's note
}

type kindForm struct {
	Wire, Title, Secret string
	Fields              []fieldForm
}

type fieldForm struct {
	channels.Field
	Name, Value string
	Secret      bool
}

// chanFormOf fills the form: every kind's fields, the channel's values in its own.
func (c *Console) chanFormOf(ch wire.Channel, isNew bool) *chanForm {
	f := &chanForm{New: isNew, ID: chanID(ch), Title: titleOf(ch.Meta), Errors: map[string]string{}, Verification: ch.Verification}
	if d, conf := c.kindOf(ch); d != nil {
		f.To = recipient(d, conf)
	}
	for _, d := range c.opt.Kinds.All() {
		k := kindForm{Wire: d.Wire, Title: d.Title, Secret: d.Secret}
		conf := configOf(ch, d.Wire)
		if conf != nil {
			f.Kind = d.Wire
		}
		for _, fd := range d.Fields {
			ff := fieldForm{Field: fd, Name: d.Wire + "." + fd.Key, Secret: fd.Key == d.Secret}
			if v, ok := conf[fd.Key].(string); ok && !ff.Secret {
				ff.Value = v
			}
			k.Fields = append(k.Fields, ff)
		}
		f.Kinds = append(f.Kinds, k)
	}
	if f.Kind == "" && len(f.Kinds) > 0 {
		f.Kind = f.Kinds[0].Wire
	}
	return f
}

func (c *Console) newChannel(w http.ResponseWriter, q *req) error {
	c.render(w, q, http.StatusOK, "channel", map[string]any{"Title": "New channel", "F": c.chanFormOf(wire.Channel{}, true)})
	return nil
}

func (c *Console) editChannel(w http.ResponseWriter, q *req) error {
	return c.showChannel(w, q, notice(q))
}

// showChannel shows the channel of the path with the message msg.
func (c *Console) showChannel(w http.ResponseWriter, q *req, msg string) error {
	var out wire.ChannelDoc
	if _, err := q.do(q.ctx, http.MethodGet, channelsPath(q.user)+"/"+q.r.PathValue("cid"), nil, &out); err != nil {
		return err
	}
	var ch wire.Channel
	if out.ChannelConfiguration != nil {
		ch = *out.ChannelConfiguration
	}
	c.render(w, q, http.StatusOK, "channel", map[string]any{"Title": titleOf(ch.Meta), "F": c.chanFormOf(ch, false), "Notice": msg})
	return nil
}

// channelBody is the API body of the posted channel form, and the chosen
// kind's wire key: the kind's fields; a secret left empty is left out, so an
// edit keeps the stored one.
func (c *Console) channelBody(r *http.Request) (wire.Channel, string) {
	key := r.PostFormValue("kind")
	conf := map[string]string{}
	if d, ok := c.opt.Kinds.ByWire(key); ok {
		for _, fd := range d.Fields {
			v := strings.TrimSpace(r.PostFormValue(key + "." + fd.Key))
			if fd.Key == d.Secret && v == "" {
				continue
			}
			conf[fd.Key] = v
		}
	}
	raw, _ := json.Marshal(conf) // a map of strings always encodes
	return wire.Channel{Configuration: map[string]json.RawMessage{key: raw},
		Meta: &wire.Meta{Title: strings.TrimSpace(r.PostFormValue("title"))}}, key
}

func (c *Console) saveChannel(w http.ResponseWriter, q *req, method, path string, isNew bool) error {
	body, key := c.channelBody(q.r)
	var out wire.ChannelDoc
	_, err := q.do(q.ctx, method, path, wire.ChannelDoc{ChannelConfiguration: &body}, &out)
	var ae *apiError
	if errors.As(err, &ae) && (ae.Status == http.StatusBadRequest || ae.Status == http.StatusConflict) {
		ch := body
		ch.Meta = &wire.Meta{Title: q.r.PostFormValue("title"), URI: path}
		if isNew {
			ch.Meta.URI = ""
		}
		f := c.chanFormOf(ch, isNew)
		f.Kind = key
		// The error's path is channelConfiguration.configuration.<wire>.<key>, or the title's.
		if key, ok := strings.CutPrefix(ae.Field, "channelConfiguration.configuration."); ok {
			f.Errors[key] = ae.Message
		} else if strings.HasPrefix(ae.Field, "channelConfiguration.meta") {
			f.Errors["title"] = ae.Message
		} else {
			f.Error = ae.Message
		}
		c.render(w, q, http.StatusBadRequest, "channel", map[string]any{"Title": "Channel", "F": f})
		return nil
	}
	if err != nil {
		return err
	}
	saved := ""
	if out.ChannelConfiguration != nil {
		saved = chanID(*out.ChannelConfiguration)
	}
	return redirect(w, q, noticeURL("/console/channels", "channelSaved", "channel", saved))
}

func (c *Console) createChannel(w http.ResponseWriter, q *req) error {
	return c.saveChannel(w, q, http.MethodPost, channelsPath(q.user), true)
}

func (c *Console) updateChannel(w http.ResponseWriter, q *req) error {
	return c.saveChannel(w, q, http.MethodPut, channelsPath(q.user)+"/"+q.r.PathValue("cid"), false)
}

func (c *Console) deleteChannel(w http.ResponseWriter, q *req) error {
	if _, err := q.do(q.ctx, http.MethodDelete, channelsPath(q.user)+"/"+q.r.PathValue("cid"), nil, nil); err != nil {
		return err
	}
	return redirect(w, q, noticeURL("/console/channels", "channelDeleted"))
}

// testChannel sends a test message through the API and shows the channel with
// what the provider answered: the answer is the page, not a redirect, so that
// no text of it travels in an address.
func (c *Console) testChannel(w http.ResponseWriter, q *req) error {
	cid := q.r.PathValue("cid")
	var out struct {
		ChannelTest struct {
			Accepted   bool   `json:"accepted"`
			ProviderID string `json:"providerId"`
			Error      string `json:"error"`
		} `json:"channelTest"`
	}
	_, err := q.do(q.ctx, http.MethodPost, channelsPath(q.user)+"/"+cid+"/test", nil, &out)
	var ae *apiError
	msg := ""
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests:
		msg = "No more tests for now; try again in " + ae.Retry + " seconds."
	case errors.As(err, &ae) && ae.Status == http.StatusConflict:
		msg = ae.Message
	case err != nil:
		return err
	case out.ChannelTest.Accepted:
		msg = "Test message accepted by the provider (id " + out.ChannelTest.ProviderID + ")."
	default:
		msg = "The provider refused the test message: " + out.ChannelTest.Error
	}
	return c.showChannel(w, q, msg)
}

// resendConfirmation sends the channel's recipient a new confirmation message
// through the API and says what the provider answered.
func (c *Console) resendConfirmation(w http.ResponseWriter, q *req) error {
	cid := q.r.PathValue("cid")
	var out struct {
		ChannelConfirmation struct {
			Accepted bool   `json:"accepted"`
			Error    string `json:"error"`
		} `json:"channelConfirmation"`
	}
	_, err := q.do(q.ctx, http.MethodPost, channelsPath(q.user)+"/"+cid+"/confirmation", nil, &out)
	var ae *apiError
	msg := ""
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests:
		msg = "No confirmation now; try again in " + ae.Retry + " seconds."
	case errors.As(err, &ae) && ae.Status == http.StatusConflict:
		msg = ae.Message
	case err != nil:
		return err
	case out.ChannelConfirmation.Accepted:
		msg = "A new confirmation message is on its way."
	default:
		msg = "The provider refused the confirmation message: " + out.ChannelConfirmation.Error
	}
	return c.showChannel(w, q, msg)
}
