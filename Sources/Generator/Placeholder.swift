public enum _GeneratorPlaceholder {}
