/// An image decoded to 8-bit RGB, row by row, top to bottom.
struct Pixels: Sendable, Equatable {
    var width: Int
    var height: Int
    var rgb: [UInt8]

    init(width: Int, height: Int, rgb: [UInt8]) {
        self.width = width
        self.height = height
        self.rgb = rgb
    }

    /// Scaled down (never up) to fit `side` × `side`, keeping the aspect ratio, each side at least one pixel; each
    /// pixel is the average of the box of pixels it covers.
    func fitting(_ side: Int) -> Pixels {
        guard width > side || height > side else { return self }
        let (newWidth, newHeight): (Int, Int) = width >= height
            ? (side, max(1, (height * side + width / 2) / width))
            : (max(1, (width * side + height / 2) / height), side)
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * 3)
        for y in 0..<newHeight {
            let top = y * height / newHeight
            let bottom = max(top + 1, (y + 1) * height / newHeight)
            for x in 0..<newWidth {
                let left = x * width / newWidth
                let right = max(left + 1, (x + 1) * width / newWidth)
                var sums = (0, 0, 0)
                for sourceY in top..<bottom {
                    var index = (sourceY * width + left) * 3
                    for _ in left..<right {
                        sums.0 += Int(rgb[index])
                        sums.1 += Int(rgb[index + 1])
                        sums.2 += Int(rgb[index + 2])
                        index += 3
                    }
                }
                let count = (bottom - top) * (right - left)
                let target = (y * newWidth + x) * 3
                out[target] = UInt8((sums.0 + count / 2) / count)
                out[target + 1] = UInt8((sums.1 + count / 2) / count)
                out[target + 2] = UInt8((sums.2 + count / 2) / count)
            }
        }
        return Pixels(width: newWidth, height: newHeight, rgb: out)
    }

    /// Turned upright as EXIF `orientation` (2–8) says the camera held it; 1 or an unknown value leaves it as is.
    func oriented(_ orientation: Int) -> Pixels {
        guard (2...8).contains(orientation) else { return self }
        let swaps = orientation >= 5
        let (newWidth, newHeight) = swaps ? (height, width) : (width, height)
        var out = [UInt8](repeating: 0, count: rgb.count)
        for y in 0..<newHeight {
            for x in 0..<newWidth {
                let (sourceX, sourceY): (Int, Int)
                switch orientation {
                case 2: (sourceX, sourceY) = (width - 1 - x, y)
                case 3: (sourceX, sourceY) = (width - 1 - x, height - 1 - y)
                case 4: (sourceX, sourceY) = (x, height - 1 - y)
                case 5: (sourceX, sourceY) = (y, x)
                case 6: (sourceX, sourceY) = (y, height - 1 - x)
                case 7: (sourceX, sourceY) = (width - 1 - y, height - 1 - x)
                default: (sourceX, sourceY) = (width - 1 - y, x)
                }
                let source = (sourceY * width + sourceX) * 3
                let target = (y * newWidth + x) * 3
                out[target] = rgb[source]
                out[target + 1] = rgb[source + 1]
                out[target + 2] = rgb[source + 2]
            }
        }
        return Pixels(width: newWidth, height: newHeight, rgb: out)
    }
}

/// The EXIF orientation tag (0x0112) of a JPEG, read from its APP1 segment before the image data; nil when there is
/// none or the segment is malformed. Every offset is checked against the bytes: the input is anyone's upload.
public enum ExifOrientation {
    public static func read(fromJPEG data: [UInt8]) -> Int? {
        var index = 2
        while index + 4 <= data.count, data[index] == 0xFF {
            let marker = data[index + 1]
            if marker == 0xDA || marker == 0xD9 { return nil }  // the image data: no EXIF after this
            if marker == 0xFF { index += 1; continue }  // fill byte
            let length = Int(data[index + 2]) << 8 | Int(data[index + 3])
            guard length >= 2, index + 2 + length <= data.count else { return nil }
            if marker == 0xE1, let value = orientation(in: data[(index + 4)..<(index + 2 + length)]) { return value }
            index += 2 + length
        }
        return nil
    }

    static func orientation(in segment: ArraySlice<UInt8>) -> Int? {
        let bytes = Array(segment)
        guard bytes.count >= 14, bytes.starts(with: Array("Exif".utf8) + [0, 0]) else { return nil }
        let tiff = 6
        let little: Bool
        switch (bytes[tiff], bytes[tiff + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let first = u16(at), let second = u16(at + 2) else { return nil }
            return little ? first | second << 16 : first << 16 | second
        }
        guard u16(tiff + 2) == 42, let ifd = u32(tiff + 4), ifd <= bytes.count, let count = u16(tiff + ifd) else { return nil }
        for entry in 0..<count {
            let at = tiff + ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112 {
                guard u16(at + 2) == 3, let value = u16(at + 8) else { return nil }  // SHORT
                return value
            }
        }
        return nil
    }
}
