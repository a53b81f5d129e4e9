import Accounts

/// The endpoints of photos (`PhotoRoutes.swift`), in the table of `Endpoints.swift`.
extension Endpoint {
    static let photoSHA = Parameter(
        name: "sha", location: .path, required: true, description: "The SHA-256 of the stored picture, in lowercase hex.",
        schema: ["type": "string", "pattern": "^[0-9a-f]{64}$"])

    static let addPhoto = Endpoint(
        path: "/v1/reports/{id}/photos",
        summary: "Add a photo to a report: the body is the image itself (`image/jpeg` or `image/png`, at most 15 MB and 50 megapixels; the format is judged by its bytes), or several as the files of a `multipart/form-data` body (all added or, when one is refused, none). The filer may while the report is open, supervisors at any time; at most 5 photos a report. The server turns it upright by its EXIF orientation, shrinks it to 2048 px and re-encodes it as JPEG without any metadata (EXIF, GPS, XMP, IPTC, comments, PNG text), with a 320-px thumbnail; the upload's GPS position, if it had one, is answered as `exif_position` and not kept. The same picture twice is one photo. Past 16 uploads at once, a 503 with `Retry-After`.",
        parameters: [reportID], answers: ["application/json"],
        answerDescription: "`{id, sha256, url, thumbnail_url, width, height, bytes, exif_position?}`; for a multipart body, `{photos: [...]}`.", answerSchema: "PhotoAdded",
        method: .post, access: .role(.inspector), requestBody: "Image", success: .created)
    static let removePhoto = Endpoint(
        path: "/v1/reports/{id}/photos/{photo}", summary: "Remove a photo from a report (the filer while it is open, supervisors).",
        parameters: [reportID, Parameter(name: "photo", location: .path, required: true, description: "The photo's id.", schema: ["type": "integer", "minimum": 1, "maximum": 9_007_199_254_740_991])],
        answers: [], answerDescription: "The photo is removed.", method: .delete, access: .role(.inspector), success: .noContent)
    static let photoImage = Endpoint(
        path: "/v1/photos/{sha}.jpg",
        summary: "A stored photo (JPEG, at most 2048 px). Immutable: its name is its content's hash. `Range` is supported. Photos of hidden reports are served to supervisors only (who may also add and remove them while it is hidden).",
        parameters: [photoSHA], answers: ["image/jpeg"], answerDescription: "The picture.")
    static let photoThumbnail = Endpoint(
        path: "/v1/photos/{sha}/thumb.jpg", summary: "A stored photo's thumbnail (JPEG, at most 320 px).", parameters: [photoSHA],
        answers: ["image/jpeg"], answerDescription: "The thumbnail.")
}
