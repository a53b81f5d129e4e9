public enum _ReportStorePlaceholder {}
