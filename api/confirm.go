package api

import "net/http"

// confirmRecipient serves the link of a confirmation message (extension).
// GET asks (mail scanners follow links, so a GET changes nothing); POST, from
// the page's button, accepts the messages of the sender's channels to the
// address and says so.
func (s *Server) confirmRecipient(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	c, err := s.notify.Confirmation(r.Context(), token)
	if err != nil {
		return s.linkError(w, err)
	}
	if r.Method == http.MethodPost && c.Verified.IsZero() {
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		_ = r.ParseForm() // nothing is read: the token decides
		if c, err = s.notify.Confirm(r.Context(), token); err != nil {
			return s.linkError(w, err)
		}
		s.page(w, http.StatusOK, linkView{Heading: "Accepted", Lines: []string{
			c.Address + " now gets the reports and alerts " + c.By + " sends it through Herald.",
			"Each message carries a link that stops it.",
		}})
		return nil
	}
	if !c.Verified.IsZero() {
		s.page(w, http.StatusOK, linkView{Heading: "Already accepted", Lines: []string{
			c.Address + " has accepted the messages of " + c.By + " since " + c.Verified.Format("2 January 2006 15:04 MST") + ".",
		}})
		return nil
	}
	s.page(w, http.StatusOK, linkView{Accept: true, Heading: "Accept messages from Herald?", Lines: []string{
		c.By + " asked Herald to send reports and alerts to " + c.Address + ".",
		"Nothing is sent there unless you accept. If you did not expect this, close this page.",
	}})
	return nil
}
