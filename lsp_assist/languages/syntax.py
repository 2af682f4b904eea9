"""Node types shared by the shipped grammars."""

#: Node types that spell a definition's name in the shipped grammars (identifiers, type
#: and field names, C++ qualified/destructor/operator names).
IDENTIFIER_NODE_TYPES = frozenset(
    {
        "identifier",
        "type_identifier",
        "field_identifier",
        "property_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "scoped_identifier",
    }
)
