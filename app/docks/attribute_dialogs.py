"""Attribute dialogs and table helpers: define a layer's fields, fill in a line's values, edit cells.

The dialogs check what is typed with :mod:`app.model.attributes` and say what
is wrong in one line under the fields, staying open until it is right.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractProxyModel, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyledItemDelegate,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.model.attributes import FIELD_KINDS, FieldDef, check_fields, parse_value, value_text
from app.model.field_edits import FieldChangeError

__all__ = ["FieldsDialog", "AttributeForm", "AttributeDelegate"]

#: Item data of a row's name cell: the name of the field the row was opened with (None: a row added).
ORIGIN_ROLE = Qt.ItemDataRole.UserRole
_FIELDS_NOTE = ("Fields of this layer. Renaming a field takes its values along; changing its type converts them. "
                "A field removed leaves its values on the lines, unseen and not exported, until a field gets its name "
                "again. Edit > Undo undoes the change.")
_KIND_TIPS = {"text": "any text", "integer": "whole numbers (lanes)", "real": "numbers (width in metres)",
              "choice": "one of a list (road class): give the choices, separated by commas"}


def _error_label() -> QLabel:
    label = QLabel(wordWrap=True)
    label.setStyleSheet("color: #c0392b")
    return label


class FieldsDialog(QDialog):
    """Define the work layer's attribute fields: name, type and (for a choice list) its choices.

    Each row opened with a field keeps that field's name (:data:`ORIGIN_ROLE`),
    so that a name edited is a rename: ``fields()`` and ``renamed()``
    (``{old name: new name}``) give the fields and the renames once accepted.
    OK hands them to ``apply(fields, renamed, clear_misfits=...)`` (as
    :meth:`app.model.tool_edits.FeatureEdits.set_fields`) when given: a change
    that would drop values (:class:`app.model.field_edits.FieldChangeError`)
    keeps the dialog open, says which and how many, and OK becomes "Clear N
    values" for that same change (any edit of the rows makes it OK again).
    """

    def __init__(self, fields=(), parent=None, apply=None):
        super().__init__(parent)
        self._apply = apply
        self._confirmed = None  # the (fields, renamed) whose lost values OK clears, once told
        self.setWindowTitle("Attribute fields")
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Name", "Type", "Choices (comma-separated)"])
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.resizeSections(QHeaderView.ResizeMode.ResizeToContents)
        probe = QComboBox()  # the type column as wide as its widest choice, the name's room for a name
        probe.addItems(list(FIELD_KINDS))
        header.resizeSection(0, max(header.sectionSize(0), 120))
        header.resizeSection(1, max(header.sectionSize(1), probe.sizeHint().width()))
        self.table.setMinimumWidth(sum(header.sectionSize(k) for k in range(3))  # (the choices' header was cut)
                                   + self.table.verticalHeader().sizeHint().width() + 2 * self.table.frameWidth() + 24)
        for field in fields:
            self.add_row(field.name, field.kind, ", ".join(field.choices))
            self.table.item(self.table.rowCount() - 1, 0).setData(ORIGIN_ROLE, field.name)
        self.table.itemChanged.connect(self._unconfirm)
        add = QPushButton("Add field", clicked=lambda: self.add_row())
        remove = QPushButton("Remove field", clicked=self.remove_selected)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.error = _error_label()
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch()
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(_FIELDS_NOTE, wordWrap=True))
        layout.addWidget(self.table)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self._fields: tuple = tuple(fields)
        self._renamed: dict = {}

    def add_row(self, name: str = "", kind: str = "text", choices: str = "") -> int:
        """Append a field row; returns its index."""
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(name))
        kinds = QComboBox()
        for k in FIELD_KINDS:
            kinds.addItem(k)
            kinds.setItemData(kinds.count() - 1, _KIND_TIPS[k], Qt.ItemDataRole.ToolTipRole)
        kinds.setCurrentText(kind)
        kinds.currentTextChanged.connect(self._unconfirm)
        self.table.setCellWidget(row, 1, kinds)
        self.table.setItem(row, 2, QTableWidgetItem(choices))
        self._unconfirm()
        return row

    def remove_selected(self) -> None:
        """Remove the rows of the selected cells."""
        for row in sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(row)
        self._unconfirm()

    def parsed(self) -> tuple[FieldDef, ...]:
        """The rows as fields (blank rows skipped); ValueError naming the row when one is wrong."""
        return check_fields(field for _, field in self._rows())

    def _rows(self) -> list[tuple]:
        """``(origin, field)`` of the rows not blank: the name of the field a row was opened with (None: added)."""
        rows = []
        for row in range(self.table.rowCount()):
            name = (self.table.item(row, 0).text() if self.table.item(row, 0) else "").strip()
            kind = self.table.cellWidget(row, 1).currentText()
            text = self.table.item(row, 2).text() if self.table.item(row, 2) else ""
            if not name and not text.strip():
                continue
            choices = tuple(c.strip() for c in text.split(",") if c.strip()) if kind == "choice" else ()
            try:
                rows.append((self.table.item(row, 0).data(ORIGIN_ROLE) if self.table.item(row, 0) else None,
                             FieldDef(name, kind, choices)))
            except ValueError as err:
                raise ValueError(f"row {row + 1}: {err}") from None
        return rows

    def accept(self) -> None:
        try:
            rows = self._rows()
            fields = check_fields(field for _, field in rows)
            renamed = {origin: field.name for origin, field in rows if origin is not None}  # (blank rows: removed)
            if self._apply is not None:
                self._apply(fields, renamed, clear_misfits=self._confirmed == (fields, renamed))
        except FieldChangeError as err:
            clear = f"Clear {err.count} value{'s' if err.count > 1 else ''}"
            self.error.setText(f"{_capitalized(str(err))}. Put those values right first or change the fields "
                               f"otherwise; or press {clear} to clear them (Edit > Undo brings them back).")
            self._confirmed = (fields, renamed)
            self.ok_button.setText(clear)
            return
        except ValueError as err:
            self.error.setText(str(err))
            return
        self._fields, self._renamed = fields, renamed
        super().accept()

    def _unconfirm(self, *_args) -> None:
        """The rows changed: OK no longer clears the values told about (the change is checked again)."""
        if self._confirmed is not None:
            self._confirmed = None
            self.ok_button.setText("OK")

    def fields(self) -> tuple[FieldDef, ...]:
        """The fields accepted (the ones given before, until then)."""
        return self._fields

    def renamed(self) -> dict:
        """``{old name: new name}`` of the fields accepted, one for each row opened with a field and kept (empty
        until then)."""
        return self._renamed


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


class AttributeForm(QDialog):
    """The values of one line, one editor per field (a list for a choice field); blank means no value.

    ``values()`` gives ``{field name: text}`` for :meth:`ExtractionTool.set_attributes`.
    """

    def __init__(self, fields, values: dict, title: str = "Attributes", parent=None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.fields = tuple(fields)
        self.editors: dict = {}
        form = QFormLayout()
        for field in self.fields:
            current = value_text(values.get(field.name))
            if field.kind == "choice":
                editor = QComboBox()
                editor.addItems(["", *field.choices])
                editor.setCurrentText(current)
            else:
                editor = QLineEdit(current, placeholderText=field.kind)
            self.editors[field.name] = editor
            form.addRow(field.name, editor)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.error = _error_label()
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def values(self) -> dict:
        """Field name -> the text entered (blank: no value)."""
        return {name: (e.currentText() if isinstance(e, QComboBox) else e.text()) for name, e in self.editors.items()}

    def accept(self) -> None:
        values = self.values()
        try:
            for field in self.fields:
                parse_value(field, values[field.name])
        except ValueError as err:
            self.error.setText(str(err))
            return
        super().accept()


class AttributeDelegate(QStyledItemDelegate):
    """Edits a choice field's cell with a list of its choices (blank: no value); other cells as text."""

    def createEditor(self, parent, option, index):
        field = _field_of(index)
        if field is None or field.kind != "choice":
            return super().createEditor(parent, option, index)
        editor = QComboBox(parent)
        editor.addItems(["", *field.choices])
        return editor

    def setEditorData(self, editor, index) -> None:
        if isinstance(editor, QComboBox):
            editor.setCurrentText(str(index.data(Qt.ItemDataRole.EditRole) or ""))
        else:
            super().setEditorData(editor, index)

    def setModelData(self, editor, model, index) -> None:
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)
        else:
            super().setModelData(editor, model, index)


def _field_of(index):
    model = index.model()
    if isinstance(model, QAbstractProxyModel):
        index, model = model.mapToSource(index), model.sourceModel()
    return model.field_at(index.column()) if hasattr(model, "field_at") else None
