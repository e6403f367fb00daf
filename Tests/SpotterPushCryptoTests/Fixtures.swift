// Keys made for these tests only (openssl genpkey), never used anywhere else: fixtures, not secrets.
enum Fixtures {
    static let vapid = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgrYXnT+qsjNAp2yVk
        Fie9M8k1a869CZw1KrHueGOgqvChRANCAARCmeVRQI81Y6A3/J/BeP88f6TiQTXX
        iI/oegRRkOwZMexiFCa4+bfs6s+8a1B21Z6INFRkGBKU0DNWez74qVZn
        -----END PRIVATE KEY-----
        """
    static let vapidSEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIK2F50/qrIzQKdslZBYnvTPJNWvOvQmcNSqx7nhjoKrwoAoGCCqGSM49
        AwEHoUQDQgAEQpnlUUCPNWOgN/yfwXj/PH+k4kE114iP6HoEUZDsGTHsYhQmuPm3
        7OrPvGtQdtWeiDRUZBgSlNAzVns++KlWZw==
        -----END EC PRIVATE KEY-----
        """
    static let apnsP8 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgrR4G06MvH5RXOYAK
        cNVBlesW95LJ79ins4Ty3xoubIChRANCAATdz5vMLdSBhpBN4hA/FlArGvJjXizr
        MPw4ctYXnmRF+GmewV0I8G5xeGxbYTL07uATXnwnoQhhzSvsu/ZSN0Pd
        -----END PRIVATE KEY-----
        """
    static let apnsPublic = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE3c+bzC3UgYaQTeIQPxZQKxryY14s
        6zD8OHLWF55kRfhpnsFdCPBucXhsW2Ey9O7gE158J6EIYc0r7Lv2UjdD3Q==
        -----END PUBLIC KEY-----
        """
    static let subscriber = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg6HCvxc5Wjv+xejWk
        tMCYDVskk/IJ1T4HkDjZ+A78cQ+hRANCAARKVfjvzH6ok15zwpeexybXQq6c4Dcq
        dtNI1ePy0+qUEnhztafTLjF7jJULCBxmUz++RfNxXfJRhXFFg7K+tM1S
        -----END PRIVATE KEY-----
        """
    static let serviceAccountKey = """
        -----BEGIN PRIVATE KEY-----
        MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDIGY+jK2XMpYT4
        0rkThDHrDZAL5o7qVdgW+R0IRqKrOzkZS4UbdCfwdEBcshtYIrtHEB2InSAS7OUD
        cxm/EDj3ZUd+uNOOM2mfYRZsTQ1CA333kzkoF3yYuaNWYvVQk8nIzKyyoFIz0EQe
        TEwsrKs68x76x/zU3YwmiYXDIbNGeylM96I2WSsk8t/PjfHMlAkGGvDZju7otunC
        nOWZWdDZ72b78yihWBJmPS9l3PhkkweVwmuQVgfTVYI7dpR0dKp2AfKYURgCAvnB
        DADz+T3XIABmEiIrhn1utZ5wsjgvcuv69aFJqkDX6fdg+OKR+5sVV29lZbjQtUhN
        CWaoL5vrAgMBAAECggEACE/7hhE+9N3pZLbIRnXG5xdUpRHqXPS8+dNWb+oTRt66
        dAENogLUx+nkZJVnimVC92RFfc/dLbwWlWqaJrRDUY+tBSgjbbRYDm1nk48t3lCr
        0nWUucQkAmovzV5mB3dkOgm6oN8FGy7rLYEI5xAzOssvvcZCDAu6Dz3GR0Fmo6ZW
        VYH981cHuUXBIifF2eYU+nepaZElg7wspNh4U7rTpPpW96f6VlubSklTeAhI3+NB
        bj7vZh5e6O02Er+BIM5S9JPZRCMJd6ncUShTsFXgNb5WDNHPMN0msZjgXRbmjYK+
        o/u1fELRzmKqJpMLtJZrpU0kUxxAqYlHzO8i5wQ2fQKBgQDm028eG1M57lKfgjPd
        xR8Rr4WsZf2UBFYBlu/o1tigWXJsslyjhCC3c8nvXq98risS3KfrvTRDRLkhm2ED
        OgaiWewNOhzcJ3XwfmTb7nzgXhEIWcHDFp2jUVS0neXhTsmk+ILROzTukBdw71VE
        qf+CEquVnFCwvmWm5T7TrTmO3wKBgQDd7ESJDtkVVwWUI7RxDpAC/lJUFgxXGFAi
        O6Z7otlC801DEWjSSD2kNRt+tpGuqUbHrpWqpqE5dPnYMJpZ3JdVdasvaz7xjNms
        Zx+c8WdwXKgeQdS4KPP9QlOEggwsVjgkwsGpLWmzxYt7L0gZHx9KWyCsNCEiy9cN
        AQVn8liwdQKBgC95VwZDKnfku1uRJOe8zioOBpkxlNjnl2TWTVt/LKi2HOGcQY9j
        8nKovuSbfc5P6A4GEgdbL6+SJ91wnqBSQ+EKS5Fg3WSuPQSMimPthgODdU9ZXo+o
        TB218Y0AWLJhSPnEHuu3mKhkPF3+63Om3yU6f83Si4n+btvHlIdmvkrTAoGBAL+e
        np7pny/57+s12Tw1osuy5UuNriIV8Dte3iWrO4W/p1rd0XCgx/jdklwbMDdsGp2Y
        dcrgDh4ajxDJBr3I5zL3Y1SSecsAH4PplzZgizxOBSv7E73gPqzTdGHaGMC/wcKc
        F7QIbli3nfRDozFt2grOHKwUZvgwogOsegqDC2lxAoGBANdGCNx5xETw2+nqTmaK
        XwNvLQe8CHFP0Phtt2+tsGv1pIRIfwzp8BP+3KTH9WqTDqJSl7xh4nKDa4ClU4Ki
        xIS2CtxWWD9xjkn3qiJ8+70OIUMe1uVeetKf9ZZQyyoJ/WV7YroyelVAwpfz4cuc
        fbGVVnFVitwIRV/YT9kZC3xm
        -----END PRIVATE KEY-----
        """
    static let serviceAccountPublic = """
        -----BEGIN PUBLIC KEY-----
        MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAyBmPoytlzKWE+NK5E4Qx
        6w2QC+aO6lXYFvkdCEaiqzs5GUuFG3Qn8HRAXLIbWCK7RxAdiJ0gEuzlA3MZvxA4
        92VHfrjTjjNpn2EWbE0NQgN995M5KBd8mLmjVmL1UJPJyMyssqBSM9BEHkxMLKyr
        OvMe+sf81N2MJomFwyGzRnspTPeiNlkrJPLfz43xzJQJBhrw2Y7u6LbpwpzlmVnQ
        2e9m+/MooVgSZj0vZdz4ZJMHlcJrkFYH01WCO3aUdHSqdgHymFEYAgL5wQwA8/k9
        1yAAZhIiK4Z9brWecLI4L3Lr+vWhSapA1+n3YPjikfubFVdvZWW40LVITQlmqC+b
        6wIDAQAB
        -----END PUBLIC KEY-----
        """
    static let p384 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDB8/hmIFVm8pM6woZ0G
        zLCUNEZ/EJ1rQZtKZzqbJ71MnFkNy/ayz9wUhhCK7C0kGhqhZANiAAQATj8FPFjt
        EFWcSHJ1zuOcLm7zDLNgf7FvUDoC4KuCko49hFK5PPOOI/xGX+bobyD03uLmujcQ
        tWDtkhnejA1mqQIXRuFT0kab83d1hxkqCSF07Wt8qdzH9hs7rqvmmgM=
        -----END PRIVATE KEY-----
        """
    static let ed25519 = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIDwvFZE7BxwSQ6Ci1uzqWKq9sa6Y0au1koF+Foqv3805
        -----END PRIVATE KEY-----
        """
    static let encryptedVAPID = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAgPBB5pZ3amVgICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEJbMY34Oh2J6LdT6PP8fi9sEgZAA
        pCdR0oQNjsWwvd2Qn4P1yykV0xgNwJQXG15j0IV1gn5olDg2Ncdu1BF9XGFdho6n
        z3zTI5GVg7IBekX8ju++7ogz94I9MlT5Mu80t9gw2If/xziiK3zVTgLOF4e985cv
        8RJhAzR+8aScPfsXhRRU5OU7usJHKQU3oCttNsJzaYhgmA+QoJTaYUsn41uDtRo=
        -----END ENCRYPTED PRIVATE KEY-----
        """
}
