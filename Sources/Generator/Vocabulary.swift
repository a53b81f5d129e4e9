/// The words and the mixes the generator draws from. Codes not listed in a weight table
/// (reference data other than the bundled one) get a small default weight, so any
/// reference data can be used.
enum Vocabulary {
    /// Real Kyiv streets (current names), for reports away from a hot spot.
    static let streets: [String] = [
        "вул. Хрещатик", "вул. Велика Васильківська", "вул. Володимирська", "вул. Саксаганського",
        "вул. Антоновича", "бульв. Тараса Шевченка", "вул. Богдана Хмельницького", "вул. Ярославів Вал",
        "вул. Січових Стрільців", "вул. Велика Житомирська", "вул. Петра Сагайдачного", "вул. Межигірська",
        "вул. Кирилівська", "просп. Оболонський", "просп. Степана Бандери", "просп. Берестейський",
        "вул. Дегтярівська", "просп. Повітряних Сил", "просп. Валерія Лобановського", "вул. Васильківська",
        "просп. Голосіївський", "просп. Науки", "просп. Академіка Глушкова", "вул. Академіка Заболотного",
        "просп. Миколи Бажана", "просп. Петра Григоренка", "вул. Ревуцького", "Харківське шосе",
        "просп. Соборності", "просп. Романа Шухевича", "Броварський просп.", "вул. Закревського",
        "просп. Червоної Калини", "бульв. Лесі Українки", "вул. Михайла Грушевського", "вул. Лук'янівська",
        "вул. Олени Теліги", "вул. Борщагівська", "просп. Леся Курбаса", "вул. Драгоманова",
        "Дніпровська набережна", "вул. Здолбунівська", "вул. Богатирська", "Столичне шосе",
    ]

    /// Share of each object type; transit stops and underpasses weigh more at a stop.
    static let objectTypeWeights: [String: Double] = [
        "lighting_pole": 26, "transit_stop": 20, "fence": 16, "building_facade": 14,
        "power_pole": 12, "other": 6, "underpass": 3.5, "tree": 2.5,
    ]
    static let defaultObjectTypeWeight = 2.0
    static let stopBoost: [String: Double] = ["transit_stop": 3, "underpass": 2]

    /// How likely each holder is for an object type, keyed "type/holder"; default 1.
    static let holderWeights: [String: Double] = [
        "lighting_pole/kyivmiskvitlo": 4, "lighting_pole/dtek_kyiv_grids": 1,
        "power_pole/dtek_kyiv_grids": 4, "power_pole/kyivpastrans": 1,
        "transit_stop/kyivpastrans": 5, "transit_stop/kyivavtodor": 2, "transit_stop/kyiv_metro": 1,
        "underpass/kyivavtodor": 3, "underpass/kyiv_metro": 2,
        "fence/housing_company": 3, "fence/private_owner": 3, "fence/condominium": 2,
        "building_facade/housing_company": 3, "building_facade/condominium": 2, "building_facade/private_owner": 3,
        "tree/kyivzelenbud": 4,
    ]

    /// The status mix, in percent.
    static let statusWeights: [String: Double] = [
        "new": 30, "verifying": 10, "confirmed": 15, "phone_blocked": 18,
        "removed": 15, "rejected": 6, "duplicate": 4, "cancelled": 2,
    ]
    static let defaultStatusWeight = 2.0

    /// Ukrainian mobile operator codes (Kyivstar, Vodafone, lifecell, 3Mob).
    static let operatorCodes: [String] = ["50", "63", "66", "67", "68", "73", "91", "92", "93", "94", "95", "96", "97", "98", "99"]

    // MARK: Violators

    static let companyStems: [String] = [
        "Кредит", "Фінанс", "Гроші", "Готівка", "Позика", "Ломбард", "Буд", "Ремонт", "Вікна", "Двері",
        "Дах", "Сантехнік", "Авто", "Таксі", "Переїзд", "Клінінг", "Євро", "Еко", "Смарт", "Мега",
        "Юрист", "Нерухомість", "Меблі", "Тепло", "Електро", "Майстер", "Вантаж", "Сервіс",
    ]
    static let companySuffixes: [String] = [
        "Плюс", "Сервіс", "Груп", "Експрес", "Центр", "Світ", "Про", "Лайн", "Маркет", "Майстер",
        "Стиль", "Допомога", "Інвест", "Трейд", "Київ", "Україна",
    ]
    static let surnames: [String] = [
        "Іваненко", "Коваленко", "Бондаренко", "Шевченко", "Мельник", "Ткаченко", "Кравченко", "Олійник",
        "Шевчук", "Поліщук", "Бойко", "Ковальчук", "Лисенко", "Марченко", "Савченко", "Руденко",
        "Мороз", "Павленко", "Кравчук", "Петренко", "Гончаренко", "Литвиненко", "Романенко", "Климченко",
        "Сидоренко", "Ткачук", "Мартинюк", "Гаврилюк", "Левченко", "Карпенко", "Зінченко", "Дорошенко",
    ]
    static let initials: [String] = ["А", "В", "Г", "Д", "Є", "І", "К", "Л", "М", "Н", "О", "П", "Р", "С", "Т", "Ю"]

    // MARK: Comments

    static let comments: [String] = [
        "Оголошення наклеєно поверх попередніх",
        "Поруч ще кілька таких самих",
        "Повторно після демонтажу",
        "Реклама кредитів без довідок",
        "Пропонують роботу з високим заробітком",
        "Розклеєно по всій зупинці",
        "Біля входу до метро",
        "Надпис фарбою через трафарет",
        "Частково зірвано",
        "Клей ще свіжий",
        "Заклеєно табличку з назвою вулиці",
        "Оголошення про викуп авто",
        "Ремонт квартир, той самий номер",
        "Поруч зі школою",
        "Кілька десятків листівок",
        "Заклеєно дорожній знак",
        "Номер написано маркером",
        "Повторне порушення за тиждень",
        "Висить на рівні очей дітей",
        "Закриває інформаційний стенд",
    ]
}
