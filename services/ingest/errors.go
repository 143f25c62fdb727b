package ingest

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// Stable error codes of the API besides those the store defines
// (document_not_found) and the intake use case answers (not_a_pdf,
// template_not_found, duplicate_message_id: intake.Code*).
const (
	codeUnauthorized       = "unauthorized"
	codeValidation         = "validation_failed"
	codeTooLarge           = "payload_too_large"
	codeUnsupportedContent = "unsupported_content_type"
	codeNotFound           = "not_found"
	codeMethodNotAllowed   = "method_not_allowed"
	codeUnavailable        = "unavailable"
	codeInternal           = "internal_error"
)

// statusByKind is the one table from error kind to HTTP status.
var statusByKind = map[string]int{
	document.EINVALID:         http.StatusUnprocessableEntity,
	document.EUNAUTHENTICATED: http.StatusUnauthorized,
	document.ENOTFOUND:        http.StatusNotFound,
	document.ECONFLICT:        http.StatusConflict,
	document.ETOOLARGE:        http.StatusRequestEntityTooLarge,
	document.EUNSUPPORTED:     http.StatusUnsupportedMediaType,
	document.EBADREQUEST:      http.StatusBadRequest,
	document.EUNAVAILABLE:     http.StatusServiceUnavailable,
	document.EINTERNAL:        http.StatusInternalServerError,
}

// errorBody is the contract's error shape: code at the top level.
type errorBody struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Details map[string]string `json:"details,omitempty"`
}

func validationError(details map[string]string) error {
	fields := make([]string, 0, len(details))
	for f := range details {
		fields = append(fields, f)
	}
	return &document.Error{Kind: document.EINVALID, Code: codeValidation,
		Message: "invalid or missing fields: " + strings.Join(sorted(fields), ", "), Details: details}
}

func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	body, status := errorBody{}, http.StatusInternalServerError
	var he *echo.HTTPError
	var rl *rateLimitedError
	if errors.As(err, &rl) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(rl.seconds()))
		status, body = http.StatusTooManyRequests, errorBody{Code: codeRateLimited, Message: rl.Error()}
	} else if e, ok := document.AsError(err); ok {
		status = statusByKind[e.Kind]
		if status == 0 {
			status = http.StatusInternalServerError
		}
		body = errorBody{Code: e.Code, Message: e.Message, Details: e.Details}
		if e.Kind == document.EINTERNAL || e.Kind == document.EUNAVAILABLE {
			body.Message = http.StatusText(status)
			if e.Kind == document.EUNAVAILABLE {
				body.Code = codeUnavailable
			} else {
				body.Code = codeInternal
			}
			s.logError(c, err)
		}
	} else if errors.As(err, &he) {
		status = he.Code
		body = errorBody{Message: fmt.Sprint(he.Message)}
		switch status {
		case http.StatusNotFound:
			body.Code = codeNotFound
		case http.StatusMethodNotAllowed:
			body.Code = codeMethodNotAllowed
		case http.StatusRequestEntityTooLarge:
			body.Code = codeTooLarge
		case http.StatusUnauthorized:
			body.Code = codeUnauthorized
		case http.StatusServiceUnavailable:
			body.Code = codeUnavailable
		default:
			if status >= 500 {
				body.Code, body.Message = codeInternal, http.StatusText(status)
				s.logError(c, err)
			} else {
				body.Code = strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
			}
		}
	} else {
		body = errorBody{Code: codeInternal, Message: http.StatusText(status)}
		s.logError(c, err)
	}
	if c.Request().Method == http.MethodHead {
		err = c.NoContent(status)
	} else {
		err = c.JSON(status, body)
	}
	if err != nil {
		s.logger.Warn("write error response", zap.Error(err))
	}
}

func (s *Server) logError(c echo.Context, err error) {
	s.logger.Error("request failed", zap.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
		zap.String("route", c.Path()), zap.Error(err))
}

func (s *Server) logPanic(c echo.Context, err error, stack []byte) error {
	s.logger.Error("panic in handler", zap.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
		zap.String("route", c.Path()), zap.Error(err), zap.ByteString("stack", stack))
	return fmt.Errorf("panic: %w", err)
}
