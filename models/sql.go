package models

import (
	"strings"

	"gorm.io/gorm"
)

// placeholders is a parenthesised list of n "?" placeholders.
func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// translate maps a driver error to GORM's (gorm.ErrDuplicatedKey, ...), which
// TranslateError does for Exec and Create but not for Raw(...).Scan.
func translate(tx *gorm.DB, err error) error {
	if t, ok := tx.Dialector.(gorm.ErrorTranslator); ok {
		return t.Translate(err)
	}
	return err
}
