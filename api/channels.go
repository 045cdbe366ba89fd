package api

import (
	"errors"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/store"
)

type channelRequest struct {
	ChannelConfiguration *channelBody `json:"channelConfiguration"`
}

type channelBody struct {
	Configuration *channelConfiguration `json:"configuration"`
	Meta          *metaIn               `json:"meta"`
}

type channelConfiguration struct {
	Email *struct {
		To string `json:"to"`
	} `json:"emailConfiguration"`
	SMS      *smsConfiguration `json:"smsConfiguration"`
	FeedChat *struct {
		Username string  `json:"username"`
		Password *string `json:"password"`
	} `json:"feedChatConfiguration"`
}

type smsConfiguration struct {
	Username string  `json:"username"`
	Password *string `json:"password"`
	From     string  `json:"from"`
	To       string  `json:"to"`
}

// metaIn is the meta of a record as clients send it: the title, and the
// server-set fields a client echoes back on PUT, which are ignored.
type metaIn struct {
	Title    string `json:"title"`
	Author   string `json:"author"`
	Category string `json:"category"`
	Created  string `json:"created"`
	Updated  string `json:"updated"`
	URI      string `json:"uri"`
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

func channelURI(uid, cid string) string { return profileURI(uid) + "/channelConfigurations/" + cid }

// channelJSON is the record as the API shows it: never a password.
func channelJSON(c store.Channel) map[string]any {
	var conf map[string]any
	switch c.Kind {
	case store.KindEmail:
		conf = map[string]any{"emailConfiguration": map[string]string{"to": c.Config.To}}
	case store.KindSMS:
		conf = map[string]any{"smsConfiguration": map[string]string{
			"username": c.Config.Username, "from": c.Config.From, "to": c.Config.To}}
	case store.KindFeedChat:
		conf = map[string]any{"feedChatConfiguration": map[string]string{"username": c.Config.Username}}
	}
	return map[string]any{"channelConfiguration": map[string]any{
		"configuration": conf,
		"meta": map[string]string{
			"title": c.Title, "author": profileURI(c.Owner), "category": "channelConfiguration",
			"created": timestamp(c.Created), "updated": timestamp(c.Updated), "uri": channelURI(c.Owner, c.ID),
		},
	}}
}

// parseChannel validates a channel body into c. The password, when given, is
// returned apart; old is the stored channel on PUT (nil on create), whose
// sealed password is kept when the body omits it.
func parseChannel(in *channelBody, c *store.Channel, old *store.Channel) (password *string, err error) {
	const root = "channelConfiguration"
	if in == nil {
		return nil, badField(root, "is required")
	}
	if in.Meta == nil || strings.TrimSpace(in.Meta.Title) == "" {
		return nil, badField(root+".meta.title", "is required")
	}
	if utf8.RuneCountInString(in.Meta.Title) > 255 {
		return nil, badField(root+".meta.title", "must be at most 255 characters")
	}
	c.Title = in.Meta.Title
	conf := in.Configuration
	if conf == nil || countSet(conf.Email != nil, conf.SMS != nil, conf.FeedChat != nil) != 1 {
		return nil, badField(root+".configuration", "must hold exactly one of emailConfiguration, smsConfiguration, feedChatConfiguration")
	}
	p := root + ".configuration."
	switch {
	case conf.Email != nil:
		c.Kind, c.Config = store.KindEmail, store.ChannelConfig{To: conf.Email.To}
		if err := checkAddress(p+"emailConfiguration.to", conf.Email.To); err != nil {
			return nil, err
		}
	case conf.SMS != nil:
		s := conf.SMS
		c.Kind, c.Config, password = store.KindSMS, store.ChannelConfig{Username: s.Username, From: s.From, To: s.To}, s.Password
		if err := checkText(p+"smsConfiguration.username", s.Username); err != nil {
			return nil, err
		}
		for _, f := range []struct{ path, v string }{{p + "smsConfiguration.from", s.From}, {p + "smsConfiguration.to", s.To}} {
			if !e164.MatchString(f.v) {
				return nil, badField(f.path, "must be a phone number in E.164 form, such as +420601234567")
			}
		}
	case conf.FeedChat != nil:
		c.Kind, c.Config, password = store.KindFeedChat, store.ChannelConfig{Username: conf.FeedChat.Username}, conf.FeedChat.Password
		if err := checkText(p+"feedChatConfiguration.username", conf.FeedChat.Username); err != nil {
			return nil, err
		}
	}
	if c.Kind == store.KindEmail {
		return nil, nil
	}
	wire := map[string]string{store.KindSMS: "smsConfiguration", store.KindFeedChat: "feedChatConfiguration"}[c.Kind]
	switch {
	case password != nil && *password == "":
		return nil, badField(p+wire+".password", "must not be empty")
	case password != nil && len(*password) > 1024:
		return nil, badField(p+wire+".password", "must be at most 1024 bytes")
	case password == nil && (old == nil || old.Kind != c.Kind || old.Secret == nil):
		return nil, badField(p+wire+".password", "is required")
	}
	return password, nil
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		n += btoi(b)
	}
	return n
}

func checkText(path, v string) error {
	if strings.TrimSpace(v) == "" {
		return badField(path, "is required")
	}
	if len(v) > 255 {
		return badField(path, "must be at most 255 characters")
	}
	return nil
}

// checkAddress accepts exactly one bare e-mail address.
func checkAddress(path, v string) error {
	if v == "" {
		return badField(path, "is required")
	}
	a, err := mail.ParseAddress(v)
	if err != nil || a.Address != v || len(v) > 254 {
		return badField(path, "must be one e-mail address such as jane@example.com")
	}
	return nil
}

func (s *Server) createChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	uid := r.PathValue("uid")
	if _, err := s.userOf(r, uid); err != nil {
		return err
	}
	var req channelRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	now := s.now()
	ch := store.Channel{ID: store.NewHexID(), Owner: uid, Created: now, Updated: now}
	password, err := parseChannel(req.ChannelConfiguration, &ch, nil)
	if err != nil {
		return err
	}
	if password != nil {
		ch.Secret = s.secrets.Seal([]byte(*password), []byte(ch.ID))
	}
	var qe *store.QuotaError
	if err := s.store.CreateChannel(r.Context(), ch, s.quota); errors.As(err, &qe) {
		return quotaReached("channels", qe)
	} else if err != nil {
		return err
	}
	w.Header().Set("Location", channelURI(uid, ch.ID))
	respond(w, r, http.StatusCreated, channelJSON(ch))
	return nil
}

// ownedChannel loads channel {cid} of user {uid}, or answers 404.
func (s *Server) ownedChannel(r *http.Request) (store.Channel, error) {
	ch, err := s.store.ChannelByID(r.Context(), r.PathValue("cid"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && ch.Owner != r.PathValue("uid")) {
		return store.Channel{}, notFound("channels", "Channel configuration %s not found", r.PathValue("cid"))
	}
	return ch, err
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	ch, err := s.ownedChannel(r)
	if err != nil {
		return err
	}
	respond(w, r, http.StatusOK, channelJSON(ch))
	return nil
}

func (s *Server) listChannels(w http.ResponseWriter, r *http.Request, c *caller) error {
	uid := r.PathValue("uid")
	if _, err := s.userOf(r, uid); err != nil {
		return err
	}
	chans, err := s.store.Channels(r.Context(), uid)
	if err != nil {
		return err
	}
	items := make([]map[string]any, 0, len(chans))
	for _, ch := range chans {
		items = append(items, channelJSON(ch))
	}
	respond(w, r, http.StatusOK, map[string]any{"channelConfigurations": map[string]any{"items": items}})
	return nil
}

func (s *Server) putChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	old, err := s.ownedChannel(r)
	if err != nil {
		return err
	}
	var req channelRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	ch := store.Channel{ID: old.ID, Owner: old.Owner, Created: old.Created, Updated: s.now()}
	password, err := parseChannel(req.ChannelConfiguration, &ch, &old)
	if err != nil {
		return err
	}
	switch {
	case password != nil:
		ch.Secret = s.secrets.Seal([]byte(*password), []byte(ch.ID))
	case ch.Kind != store.KindEmail:
		ch.Secret = old.Secret
	}
	if err := s.store.UpdateChannel(r.Context(), ch); err != nil {
		return err
	}
	respond(w, r, http.StatusOK, channelJSON(ch))
	return nil
}

func (s *Server) deleteChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	ch, err := s.ownedChannel(r)
	if err != nil {
		return err
	}
	var inUse *store.InUseError
	switch err := s.store.DeleteChannel(r.Context(), ch.ID); {
	case errors.As(err, &inUse):
		return conflict("channels", "Channel configuration %s is used by subscriptions %s; remove it from them first",
			ch.ID, strings.Join(inUse.By, ", "))
	case err != nil:
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
