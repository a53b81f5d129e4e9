public enum _InterchangePlaceholder {}
