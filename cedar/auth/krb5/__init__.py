"""The Kerberos V5 pieces the KERBEROS method needs, in pure Python on ``cryptography``.

``crypto`` (RFC 3961/3962 AES), ``der`` (the DER codec), ``messages`` (RFC 4120 messages),
``files`` (MIT ccache, keytab, ``krb5.conf``) and ``kdc`` (the TGS exchange).  Imported only when
KERBEROS runs (the method is deferred), never by ``import cedar``.  Why not a PyPI package:
``docs/kerberos.md``.
"""
