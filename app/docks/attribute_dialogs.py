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

__all__ = ["FieldsDialog", "AttributeForm", "AttributeDelegate"]

_KIND_TIPS = {"text": "any text", "integer": "whole numbers (lanes)", "real": "numbers (width in metres)",
              "choice": "one of a list (road class): give the choices, separated by commas"}


def _error_label() -> QLabel:
    label = QLabel(wordWrap=True)
    label.setStyleSheet("color: #c0392b")
    return label


class FieldsDialog(QDialog):
    """Define the work layer's attribute fields: name, type and (for a choice list) its choices.

    ``fields()`` gives the tuple of :class:`FieldDef` once accepted.
    """

    def __init__(self, fields=(), parent=None):
        super().__init__(parent)
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
        add = QPushButton("Add field", clicked=lambda: self.add_row())
        remove = QPushButton("Remove field", clicked=self.remove_selected)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.error = _error_label()
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch()
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Fields of this layer (values already given stay with the lines):"))
        layout.addWidget(self.table)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self._fields: tuple = tuple(fields)

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
        self.table.setCellWidget(row, 1, kinds)
        self.table.setItem(row, 2, QTableWidgetItem(choices))
        return row

    def remove_selected(self) -> None:
        """Remove the rows of the selected cells."""
        for row in sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(row)

    def parsed(self) -> tuple[FieldDef, ...]:
        """The rows as fields (blank rows skipped); ValueError naming the row when one is wrong."""
        fields = []
        for row in range(self.table.rowCount()):
            name = (self.table.item(row, 0).text() if self.table.item(row, 0) else "").strip()
            kind = self.table.cellWidget(row, 1).currentText()
            text = self.table.item(row, 2).text() if self.table.item(row, 2) else ""
            if not name and not text.strip():
                continue
            choices = tuple(c.strip() for c in text.split(",") if c.strip()) if kind == "choice" else ()
            try:
                fields.append(FieldDef(name, kind, choices))
            except ValueError as err:
                raise ValueError(f"row {row + 1}: {err}") from None
        return check_fields(fields)

    def accept(self) -> None:
        try:
            self._fields = self.parsed()
        except ValueError as err:
            self.error.setText(str(err))
            return
        super().accept()

    def fields(self) -> tuple[FieldDef, ...]:
        """The fields accepted (the ones given before, until then)."""
        return self._fields


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
